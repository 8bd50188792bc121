package dev.gantry.admission.rest;

import dev.gantry.admission.domain.JobState;
import dev.gantry.admission.persistence.JobEntity;
import java.time.Instant;
import java.util.UUID;

/** A job as the API shows it. */
public record JobView(UUID id, String name, String queue, String team, String owner, String priorityClass, int priority,
        int totalGpus, JobState state, String pendingReason, Instant submittedAt, Instant updatedAt) {

    static JobView of(JobEntity job) {
        return new JobView(job.id, job.name, job.queue, job.team, job.owner, job.priorityClass, job.priority, job.totalGpus,
                job.state, job.pendingReason, job.submittedAt, job.updatedAt);
    }
}
