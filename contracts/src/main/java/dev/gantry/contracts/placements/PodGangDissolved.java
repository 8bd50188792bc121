package dev.gantry.contracts.placements;

import java.time.Instant;
import java.util.UUID;

/**
 * Payload of {@code placements.gang-dissolved}: a user's gang that was formed but not yet placed
 * lost pods below its minimum (the user or their controller deleted them). Admission withdraws the
 * job (CANCELLED, {@code jobs.cancelled}), so its quota and place in line are given up.
 */
public record PodGangDissolved(UUID jobId, String namespace, String gang, String reason, Instant dissolvedAt) {
}
