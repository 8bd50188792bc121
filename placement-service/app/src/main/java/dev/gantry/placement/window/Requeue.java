package dev.gantry.placement.window;

import dev.gantry.contracts.events.EventCodec;
import dev.gantry.contracts.jobs.JobQueued;
import dev.gantry.contracts.placements.PlacementReleased;
import dev.gantry.kit.outbox.Outbox;
import dev.gantry.placement.persistence.AgentTask;
import dev.gantry.placement.persistence.Allocation;
import dev.gantry.placement.persistence.JobMigration;
import dev.gantry.placement.persistence.PendingJob;
import dev.gantry.placement.persistence.RunningJobRecord;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Instant;
import java.util.UUID;
import org.jboss.logging.Logger;

/** A running job released and back in the pending set with its original submission time. Inside a transaction. */
@ApplicationScoped
public class Requeue {

    private static final Logger LOG = Logger.getLogger(Requeue.class);

    private final Outbox outbox;

    public Requeue(Outbox outbox) {
        this.outbox = outbox;
    }

    public Uni<Boolean> requeue(UUID jobId, String subject, String reason) {
        return RunningJobRecord.<RunningJobRecord>findById(jobId)
                .chain(job -> job == null ? Uni.createFrom().item(false) : requeue(job, subject, reason));
    }

    /** The event on {@code subject} (none when null: it went out already). */
    public Uni<Boolean> requeue(RunningJobRecord job, String subject, String reason) {
        PlanWrites writes = new PlanWrites();
        returnToPending(job, subject, reason, writes);
        boolean moving = job.migrationTargets != null;
        return Allocation.delete("jobId", job.jobId).chain(() -> AgentTask.delete("jobId", job.jobId))
                // a job lost while it was being moved: its move ends here (the GPUs held for it go with its row)
                .chain(() -> moving ? JobMigration.update("finishedAt = ?1, outcome = ?2 where jobId = ?3 and finishedAt is null",
                        Instant.now(), JobMigration.ABANDONED, job.jobId) : Uni.createFrom().item(0))
                .chain(() -> writes.apply(outbox)).replaceWith(true);
    }

    /**
     * The running row to go and a pending row in its place, with the original submission time; its
     * event on {@code subject} (none when null: it went out already). The caller deletes the
     * allocations.
     */
    static void returnToPending(RunningJobRecord job, String subject, String reason, PlanWrites writes) {
        UUID jobId = job.jobId;
        JobQueued spec = EventCodec.fromJson(job.spec, JobQueued.class);
        PendingJob pending = new PendingJob();
        pending.jobId = jobId;
        pending.name = spec.name();
        pending.queue = spec.queue();
        pending.priority = spec.priority();
        pending.totalGpus = spec.totalGpus();
        pending.spec = job.spec;
        pending.submittedAt = job.submittedAt; // keeps its place in line
        pending.receivedAt = Instant.now();
        writes.delete(job);
        writes.insert(pending);
        if (subject != null) {
            writes.event(subject, jobId, new PlacementReleased(jobId, spec.queue(), reason, Instant.now()));
        }
        LOG.infof("job %s back to pending (%s): %s", jobId, subject == null ? "grace period over" : subject, reason);
    }
}
