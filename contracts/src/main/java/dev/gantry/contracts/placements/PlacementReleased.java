package dev.gantry.contracts.placements;

import java.time.Instant;
import java.util.UUID;

/**
 * Payload of {@code placements.preempted}, {@code placements.failed} and {@code placements.completed}: the job no longer holds
 * what its {@link PlacementBound} gave it. {@code reason} says why, for people (e.g. "reclaimed by
 * queue urgent", "node dgx-03 lost", "completed").
 */
public record PlacementReleased(UUID jobId, String queue, String reason, Instant releasedAt) {
}
