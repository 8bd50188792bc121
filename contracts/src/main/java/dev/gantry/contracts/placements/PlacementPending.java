package dev.gantry.contracts.placements;

import java.time.Instant;
import java.util.UUID;

/**
 * Payload of {@code placements.pending}: why a queued job was left waiting by the last scheduling
 * window, in words a user can act on ("needs 32 A100 GPUs under one leaf; the best leaf has 24 free").
 * Placement publishes it when the reason of a job changes, not every window.
 */
public record PlacementPending(UUID jobId, String queue, String reason, Instant decidedAt) {
}
