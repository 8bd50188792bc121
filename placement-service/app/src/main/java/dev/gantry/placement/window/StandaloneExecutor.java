package dev.gantry.placement.window;

import dev.gantry.contracts.events.EventCodec;
import dev.gantry.contracts.events.Subjects;
import dev.gantry.contracts.jobs.JobQueued;
import dev.gantry.contracts.nodes.NodeInfo;
import dev.gantry.contracts.placements.PlacementReleased;
import dev.gantry.kit.outbox.Outbox;
import dev.gantry.placement.cluster.BinderMode;
import dev.gantry.placement.cluster.ClusterActuator;
import dev.gantry.placement.persistence.AgentTask;
import dev.gantry.placement.persistence.Allocation;
import dev.gantry.placement.persistence.ClusterGang;
import dev.gantry.placement.persistence.EndedJob;
import dev.gantry.placement.persistence.JobMigration;
import dev.gantry.placement.persistence.JobPreemption;
import dev.gantry.placement.persistence.RunningJobRecord;
import io.quarkus.hibernate.reactive.panache.Panache;
import io.quarkus.scheduler.Scheduled;
import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.core.Vertx;
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
 * forgets a running job nor completes it early. In kubernetes mode the pods' phases say when a job
 * ends, so nothing falls due; releasing a job then also deletes the pods gantry created for it.
 */
@ApplicationScoped
public class StandaloneExecutor {

    private static final Logger LOG = Logger.getLogger(StandaloneExecutor.class);
    /** Due time of a job on a real cluster: never (its pods report the end). */
    static final Instant NEVER = Instant.parse("9999-12-31T00:00:00Z");

    private final Outbox outbox;
    private final boolean kubernetes;
    private final ClusterActuator cluster;
    private final Vertx vertx;
    private final double speedup;
    private final Duration defaultRuntime;
    private final RuntimeHistory history;

    public StandaloneExecutor(Outbox outbox, BinderMode mode, ClusterActuator cluster, Vertx vertx, RuntimeHistory history,
            @ConfigProperty(name = "gantry.placement.standalone.speedup", defaultValue = "0.01") double speedup,
            @ConfigProperty(name = "gantry.placement.standalone.default-runtime", defaultValue = "60s") Duration defaultRuntime) {
        this.outbox = outbox;
        this.kubernetes = mode.kubernetes();
        this.cluster = cluster;
        this.vertx = vertx;
        this.speedup = speedup;
        this.defaultRuntime = defaultRuntime;
        this.history = history;
    }

    /** When a job bound at {@code boundAt} is done: its estimated runtime (or the default) times the speed-up. */
    public Instant dueAt(Instant boundAt, JobQueued spec) {
        if (kubernetes) {
            return NEVER;
        }
        double seconds = spec.estimatedRuntimeSeconds() != null ? spec.estimatedRuntimeSeconds() : defaultRuntime.toMillis() / 1000.0;
        return boundAt.plusMillis(Math.max(0L, Math.round(seconds * speedup * 1000)));
    }

    @Scheduled(every = "${gantry.placement.standalone.sweep-interval:1s}", concurrentExecution = Scheduled.ConcurrentExecution.SKIP,
            skipExecutionIf = Scheduled.ApplicationNotRunning.class)
    Uni<Void> sweep() {
        if (kubernetes) {
            return Uni.createFrom().voidItem();
        }
        Instant now = Instant.now();
        // a victim in its grace period is not completed: it is on its way back to the pending set; a job
        // with a task on a node an agent manages ends when its agent reports its tasks' exits (AgentTasks)
        return Panache.withSession(() -> RunningJobRecord.<RunningJobRecord>list("dueAt <= ?1 and evictingUntil is null and jobId not in "
                + "(select a.jobId from Allocation a, NodeRecord n where n.name = a.node and n.source = ?2) order by dueAt", now,
                NodeInfo.SOURCE_AGENT))
                .onItem().transformToMulti(due -> Multi.createFrom().iterable(due))
                .onItem().transformToUniAndConcatenate(job -> Panache.withTransaction(() -> release(job.jobId, "completed"))
                        .onFailure().recoverWithItem(e -> {
                            LOG.warnf("completing job %s failed (next sweep retries): %s", job.jobId, e.toString());
                            return false;
                        }))
                .collect().last()
                .replaceWithVoid();
    }

    /** Whether ending a job stops pods on a cluster (kubernetes mode): then a release cannot be done by SQL alone. */
    public boolean stopsPods() {
        return cluster.acts();
    }

    /**
     * Releases what a running job holds and appends {@code placements.completed} with the reason.
     * Call inside a transaction. False (and nothing changes) when the job is not running.
     */
    public Uni<Boolean> release(UUID jobId, String reason) {
        return release(jobId, Subjects.PLACEMENTS_COMPLETED, reason);
    }

    /**
     * Releases what a running job holds for good (it does not return to the pending set) and
     * appends the event on {@code subject}. In kubernetes mode a job that did not complete loses
     * the pods gantry created for it. Call inside a transaction; false when the job is not running.
     */
    public Uni<Boolean> release(UUID jobId, String subject, String reason) {
        return release(jobId, subject, reason, null);
    }

    /** As {@link #release(UUID, String, String)}, the event carrying the exit code its processes reported (null: none). */
    public Uni<Boolean> release(UUID jobId, String subject, String reason, Integer exitCode) {
        return RunningJobRecord.<RunningJobRecord>findById(jobId).chain(job -> {
            if (job == null) {
                return Uni.createFrom().item(false);
            }
            String queue = job.queue;
            return stopPods(jobId, reason)
                    .chain(() -> recordRuntime(job, subject, reason))
                    .chain(() -> Allocation.delete("jobId", jobId))
                    .chain(() -> AgentTask.delete("jobId", jobId))
                    .chain(() -> job.delete())
                    .chain(() -> JobPreemption.deleteById(jobId))
                    .chain(() -> ClusterGang.deleteById(jobId))
                    // ended while it was being moved: its move ends with it
                    .chain(() -> JobMigration.update("finishedAt = ?1, outcome = ?2 where jobId = ?3 and finishedAt is null",
                            Instant.now(), JobMigration.ABANDONED, jobId))
                    .chain(() -> EndedJob.record(jobId, subject))
                    .chain(() -> outbox.append(subject, jobId.toString(), new PlacementReleased(jobId, queue, reason, Instant.now(), exitCode)))
                    .invoke(() -> LOG.infof("job %s released its GPUs (%s: %s)", jobId, subject, reason))
                    .replaceWith(true);
        });
    }

    /** A job that completed adds how long it ran to the history that estimates runtimes for the reservations. */
    private Uni<Void> recordRuntime(RunningJobRecord job, String subject, String reason) {
        if (!Subjects.PLACEMENTS_COMPLETED.equals(subject) || !"completed".equals(reason) || job.boundAt == null) {
            return Uni.createFrom().voidItem();
        }
        JobQueued spec;
        try {
            spec = EventCodec.fromJson(job.spec, JobQueued.class);
        } catch (RuntimeException e) {
            LOG.debugf("job %s: runtime not recorded, spec unreadable: %s", job.jobId, e.getMessage());
            return Uni.createFrom().voidItem();
        }
        return history.record(spec, Duration.between(job.boundAt, Instant.now()));
    }

    /** A cancelled or failed job's pods go before its GPUs are given to anyone else. */
    private Uni<Void> stopPods(UUID jobId, String reason) {
        if (!cluster.acts() || "completed".equals(reason)) {
            return Uni.createFrom().voidItem();
        }
        return ClusterGang.<ClusterGang>findById(jobId).chain(row -> row == null ? Uni.createFrom().voidItem()
                : vertx.executeBlocking(Uni.createFrom().item(() -> {
                    cluster.stop(new ClusterActuator.GangRef(jobId, row.namespace, row.gangLabel, row.userPods));
                    return null;
                })).replaceWithVoid());
    }
}
