package dev.gantry.admission.rest;

import dev.gantry.admission.domain.JobPlacement;
import dev.gantry.admission.domain.JobState;
import dev.gantry.admission.persistence.JobEntity;
import java.time.Instant;
import java.util.List;
import java.util.UUID;

/**
 * A job as the API shows it, with where and how it ran: {@code attempts} (how many times it was
 * placed), {@code placement} (the last one: held while PLACED or RUNNING, kept as history after;
 * null when never placed) and {@code exitCode} (what its processes exited with, when reported).
 * For a FAILED job {@code pendingReason} is why it failed.
 */
public record JobView(UUID id, String name, String queue, String team, String owner, String priorityClass, int priority,
        int totalGpus, JobState state, String pendingReason, Instant submittedAt, Instant updatedAt, int attempts,
        Placement placement, Integer exitCode) {

    /** One placement: its attempt, when it was bound, the nodes and GPUs in short ({@link JobPlacement#nodeList()}), each task. */
    public record Placement(int attempt, Instant boundAt, String nodeList, List<JobPlacement.Task> tasks) {
        static Placement of(JobPlacement placement) {
            return placement == null ? null
                    : new Placement(placement.attempt(), placement.boundAt(), placement.nodeList(), placement.tasks());
        }
    }

    static JobView of(JobEntity job) {
        return new JobView(job.id, job.name, job.queue, job.team, job.owner, job.priorityClass, job.priority, job.totalGpus,
                job.state, job.pendingReason, job.submittedAt, job.updatedAt, job.attempts,
                Placement.of(JobPlacement.fromJson(job.placement)), job.exitCode);
    }
}
