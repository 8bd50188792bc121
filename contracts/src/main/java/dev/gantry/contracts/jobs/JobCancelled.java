package dev.gantry.contracts.jobs;

import java.time.Instant;
import java.util.UUID;

/** Payload of {@code jobs.cancelled}: the job's owner (or an admin) withdrew it; placement releases what it holds. */
public record JobCancelled(UUID jobId, String queue, String cancelledBy, Instant cancelledAt) {
}
