package dev.gantry.contracts.placements;

import java.time.Instant;
import java.util.UUID;

/**
 * Payload of {@code placements.bound}: a job's whole gang was bound to nodes and now holds these
 * resources in its queue until a {@link PlacementReleased} for the same job.
 *
 * @param gpuModel the model of the GPUs it holds; null when none or mixed
 * @param owner    the submitting user (null if unknown)
 */
public record PlacementBound(UUID jobId, String queue, String owner, int gpus, String gpuModel, long cpuMillis, long memoryMiB,
        Instant boundAt) {
}
