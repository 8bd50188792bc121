package dev.gantry.admission;

import dev.gantry.admission.domain.JobSpec;
import dev.gantry.admission.domain.JobState;
import dev.gantry.admission.persistence.JobEntity;
import dev.gantry.contracts.events.EventCodec;
import dev.gantry.contracts.events.Subjects;
import dev.gantry.contracts.jobs.JobQueued;
import dev.gantry.contracts.validation.FieldViolation;
import dev.gantry.kit.outbox.Outbox;
import dev.gantry.kit.problem.InvalidRequestException;
import io.quarkus.hibernate.reactive.panache.Panache;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Instant;
import java.util.List;
import java.util.UUID;

/**
 * Accepts jobs: validates the spec, then stores the job and its {@code jobs.queued} event in one
 * transaction, so the event exists exactly when the job does.
 */
@ApplicationScoped
public class JobAdmission {

    private final Outbox outbox;

    public JobAdmission(Outbox outbox) {
        this.outbox = outbox;
    }

    public Uni<JobEntity> submit(JobSpec spec, String owner) {
        List<FieldViolation> violations = spec.violations();
        if (!violations.isEmpty()) {
            throw InvalidRequestException.unprocessable(violations);
        }
        Instant now = Instant.now();
        JobEntity job = new JobEntity();
        job.id = UUID.randomUUID();
        job.name = spec.name();
        job.queue = spec.queue();
        job.owner = owner;
        job.priority = spec.priority();
        job.totalGpus = spec.totalGpus();
        job.state = JobState.QUEUED;
        job.spec = EventCodec.toJson(spec);
        job.submittedAt = now;
        job.updatedAt = now;
        JobQueued event = new JobQueued(job.id, spec.name(), spec.queue(), owner, spec.priority(), now, spec.minAvailable(),
                spec.taskGroups().stream()
                        .map(g -> new JobQueued.TaskGroup(g.name(), g.replicas(), g.gpusPerReplica(), g.gpuMilli(), g.cpuMillis(), g.memoryMiB()))
                        .toList());
        return Panache.withTransaction(() -> job.<JobEntity>persist()
                .call(() -> outbox.append(Subjects.JOBS_QUEUED, job.id.toString(), event)));
    }

    public Uni<JobEntity> find(UUID id) {
        return Panache.withSession(() -> JobEntity.<JobEntity>findById(id));
    }
}
