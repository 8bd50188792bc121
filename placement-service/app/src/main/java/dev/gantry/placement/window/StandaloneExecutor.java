package dev.gantry.placement.window;

import dev.gantry.contracts.events.Subjects;
import dev.gantry.contracts.jobs.JobQueued;
import dev.gantry.contracts.placements.PlacementReleased;
import dev.gantry.kit.outbox.Outbox;
import dev.gantry.placement.persistence.Allocation;
import dev.gantry.placement.persistence.RunningJobRecord;
import io.quarkus.hibernate.reactive.panache.Panache;
import io.quarkus.scheduler.Scheduled;
import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Duration;
import java.time.Instant;
import java.util.UUID;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.jboss.logging.Logger;

/**
 * Standalone mode's stand-in for a cluster: a placed job "runs" for its estimated runtime times a
 * speed-up factor, then completes. The due time is stored with the job at bind time
 * ({@code running_job.due_at}) and a periodic sweep completes what is due, so a restart neither
 * forgets a running job nor completes it early.
 */
@ApplicationScoped
public class StandaloneExecutor {

    private static final Logger LOG = Logger.getLogger(StandaloneExecutor.class);

    private final Outbox outbox;
    private final double speedup;
    private final Duration defaultRuntime;

    public StandaloneExecutor(Outbox outbox,
            @ConfigProperty(name = "gantry.placement.standalone.speedup", defaultValue = "0.01") double speedup,
            @ConfigProperty(name = "gantry.placement.standalone.default-runtime", defaultValue = "60s") Duration defaultRuntime) {
        this.outbox = outbox;
        this.speedup = speedup;
        this.defaultRuntime = defaultRuntime;
    }

    /** When a job bound at {@code boundAt} is done: its estimated runtime (or the default) times the speed-up. */
    public Instant dueAt(Instant boundAt, JobQueued spec) {
        double seconds = spec.estimatedRuntimeSeconds() != null ? spec.estimatedRuntimeSeconds() : defaultRuntime.toMillis() / 1000.0;
        return boundAt.plusMillis(Math.max(0L, Math.round(seconds * speedup * 1000)));
    }

    @Scheduled(every = "${gantry.placement.standalone.sweep-interval:1s}", concurrentExecution = Scheduled.ConcurrentExecution.SKIP,
            skipExecutionIf = Scheduled.ApplicationNotRunning.class)
    Uni<Void> sweep() {
        Instant now = Instant.now();
        return Panache.withSession(() -> RunningJobRecord.<RunningJobRecord>list("dueAt <= ?1 order by dueAt", now))
                .onItem().transformToMulti(due -> Multi.createFrom().iterable(due))
                .onItem().transformToUniAndConcatenate(job -> Panache.withTransaction(() -> release(job.jobId, "completed"))
                        .onFailure().recoverWithItem(e -> {
                            LOG.warnf("completing job %s failed (next sweep retries): %s", job.jobId, e.toString());
                            return false;
                        }))
                .collect().last()
                .replaceWithVoid();
    }

    /**
     * Releases what a running job holds and appends {@code placements.completed} with the reason.
     * Call inside a transaction. False (and nothing changes) when the job is not running.
     */
    public Uni<Boolean> release(UUID jobId, String reason) {
        return RunningJobRecord.<RunningJobRecord>findById(jobId).chain(job -> {
            if (job == null) {
                return Uni.createFrom().item(false);
            }
            String queue = job.queue;
            return Allocation.delete("jobId", jobId)
                    .chain(() -> job.delete())
                    .chain(() -> outbox.append(Subjects.PLACEMENTS_COMPLETED, jobId.toString(),
                            new PlacementReleased(jobId, queue, reason, Instant.now())))
                    .invoke(() -> LOG.infof("job %s released its GPUs (%s)", jobId, reason))
                    .replaceWith(true);
        });
    }
}
