package dev.gantry.placement.window;

import dev.gantry.contracts.events.EventCodec;
import dev.gantry.contracts.events.Subjects;
import dev.gantry.contracts.jobs.JobQueued;
import dev.gantry.placement.cluster.ClusterActuator;
import dev.gantry.placement.cluster.Leadership;
import dev.gantry.placement.persistence.Allocation;
import dev.gantry.placement.persistence.ClusterGang;
import dev.gantry.placement.persistence.RunningJobRecord;
import io.quarkus.hibernate.reactive.panache.Panache;
import io.quarkus.scheduler.Scheduled;
import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Instance;
import java.time.Instant;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.jboss.logging.Logger;

/**
 * Brings what was recorded and the cluster back in line after the fact: placements recorded but
 * never launched are launched again, victims whose grace period is over give up their GPUs (and
 * jobs stopped for a move move), a job
 * whose pod was deleted outside Gantry or whose node is gone loses its placement.
 */
@ApplicationScoped
public class Reconciler {

    private static final Logger LOG = Logger.getLogger(Reconciler.class);

    private final GangLauncher launcher;
    private final Gangs gangs;
    private final Requeue requeue;
    private final StandaloneExecutor executor;
    private final Leadership leadership;

    private final MigrationFinisher migrations;
    private final WindowMetrics metrics;
    /** The window loop plans through the binder, which fronts this class: looked up when used. */
    private final Instance<WindowLoop> windows;

    public Reconciler(GangLauncher launcher, Gangs gangs, Requeue requeue, StandaloneExecutor executor, Leadership leadership,
            MigrationFinisher migrations, WindowMetrics metrics, Instance<WindowLoop> windows) {
        this.migrations = migrations;
        this.metrics = metrics;
        this.windows = windows;
        this.launcher = launcher;
        this.gangs = gangs;
        this.requeue = requeue;
        this.executor = executor;
        this.leadership = leadership;
    }

    /** Victims whose grace period is over give up their GPUs and return to the pending set (their event went out when told). */
    @Scheduled(every = "${gantry.placement.standalone.sweep-interval:1s}", concurrentExecution = Scheduled.ConcurrentExecution.SKIP,
            skipExecutionIf = Scheduled.ApplicationNotRunning.class)
    Uni<Void> finishEvictions() {
        if (!leadership.leading()) {
            return Uni.createFrom().voidItem();
        }
        return Panache.withSession(() -> RunningJobRecord.<RunningJobRecord>list("evictingUntil <= ?1 order by evictingUntil", Instant.now()))
                .onItem().transformToMulti(due -> Multi.createFrom().iterable(due))
                .onItem().transformToUniAndConcatenate(job -> finishEviction(job.jobId).onFailure().recoverWithItem(e -> {
                    LOG.warnf("ending the eviction of %s failed (next sweep retries): %s", job.jobId, e.toString());
                    return false;
                }))
                .collect().last()
                .replaceWithVoid();
    }

    /**
     * Ends a victim's grace: its pods go (if any are left), then its GPUs, in that order. A job
     * told to stop for a move is moved instead ({@link MigrationFinisher}); its new pods are
     * launched once that is recorded, and a window runs at once for the job the move made room for.
     */
    Uni<Boolean> finishEviction(UUID jobId) {
        return Panache.withSession(() -> gangs.gangRef(jobId))
                .call(gang -> gang == null ? Uni.createFrom().nullItem() : launcher.evictNow(gang))
                .chain(gang -> Panache.withTransaction(() -> RunningJobRecord.<RunningJobRecord>findById(jobId).chain(job -> {
                    if (job == null || job.evictingUntil == null) {
                        return Uni.createFrom().item(MigrationFinisher.Finished.NOTHING);
                    }
                    if (MigrationFinisher.moving(job)) {
                        return migrations.finish(job);
                    }
                    return requeue.requeue(job, null, job.evictReason == null ? "preempted" : job.evictReason)
                            .replaceWith(MigrationFinisher.Finished.NOTHING);
                })))
                .chain(this::afterMove);
    }

    /** A move recorded as done: counted, its new pods launched (kubernetes mode), the waiting jobs planned. */
    private Uni<Boolean> afterMove(MigrationFinisher.Finished finished) {
        if (!finished.moved()) {
            return Uni.createFrom().item(false);
        }
        metrics.observeMigrated();
        Uni<Boolean> launched = finished.gang() == null || !launcher.claim(finished.gang().ref().jobId()) ? Uni.createFrom().item(true)
                : launcher.launch(finished.gang()).eventually(() -> launcher.unclaim(finished.gang().ref().jobId()));
        return launched.call(() -> windows.get().runWindow().onFailure().recoverWithItem(0)).replaceWith(true);
    }

    /**
     * Every job holding GPUs on a node that is gone loses its placement: back to pending with its
     * submission time, {@code placements.requeued}. Call inside a transaction.
     */
    Uni<Void> failJobsOn(String node) {
        return Allocation.<Allocation>list("node", node).chain(rows -> {
            List<UUID> jobs = rows.stream().map(a -> a.jobId).distinct().toList();
            Uni<Void> chain = Uni.createFrom().voidItem();
            for (UUID jobId : jobs) {
                chain = chain.chain(() -> requeue.requeue(jobId, Subjects.PLACEMENTS_REQUEUED, "node " + node + " lost")).replaceWithVoid();
            }
            return chain;
        });
    }

    /**
     * Placements recorded but never launched (the service stopped between recording a placement and
     * creating its pods, or marking them launched): launched again from the allocation rows, so on
     * the same nodes and GPUs. Pods already made for the attempt are reused (the launch is
     * idempotent); a launch that fails is undone as a first launch is. A victim in its grace period
     * is left to {@link #finishEvictions}. The item is the number of jobs launched.
     */
    Uni<Integer> relaunch() {
        if (!launcher.acts() || !leadership.leading()) {
            return Uni.createFrom().item(0);
        }
        return Panache.withSession(() -> ClusterGang.<ClusterGang>list("launchedAt is null and jobId in "
                        + "(select r.jobId from RunningJobRecord r where r.evictingUntil is null) order by createdAt"))
                .map(rows -> rows.stream().map(r -> r.jobId).toList())
                .onItem().transformToMulti(ids -> Multi.createFrom().iterable(ids))
                .onItem().transformToUniAndConcatenate(this::relaunch)
                .collect().asList()
                .map(done -> (int) done.stream().filter(Boolean::booleanValue).count());
    }

    private Uni<Boolean> relaunch(UUID jobId) {
        if (!launcher.claim(jobId)) {
            return Uni.createFrom().item(false); // the binder is launching it right now
        }
        // read again once claimed: a launch that just finished has recorded launched_at by now
        return Panache.withSession(() -> unlaunched(jobId))
                .chain(gang -> {
                    if (gang == null) {
                        return Uni.createFrom().item(false);
                    }
                    LOG.infof("job %s: placement recorded but its pods never launched (restart?): launching attempt %d again",
                            jobId, gang.attempt());
                    return launcher.launch(gang);
                })
                .onFailure().recoverWithItem(e -> {
                    LOG.warnf("relaunching %s failed (next sweep retries): %s", jobId, e.toString());
                    return false;
                })
                .eventually(() -> launcher.unclaim(jobId));
    }

    /** The recorded placement of a running job whose pods were not launched, or null. */
    private Uni<ClusterActuator.Gang> unlaunched(UUID jobId) {
        return ClusterGang.<ClusterGang>findById(jobId).chain(row -> row == null || row.launchedAt != null ? Uni.createFrom().nullItem()
                : RunningJobRecord.<RunningJobRecord>findById(jobId).chain(job -> job == null || job.evictingUntil != null
                        ? Uni.createFrom().nullItem()
                        : Allocation.<Allocation>list("jobId = ?1 order by id", jobId).map(rows -> {
                            if (rows.isEmpty()) {
                                return null;
                            }
                            List<ClusterActuator.TaskBinding> tasks = rows.stream().map(a -> new ClusterActuator.TaskBinding(a.task, a.node,
                                    Arrays.stream(a.gpuIndices).boxed().toList(), a.gpuMilli, a.migProfile,
                                    a.migDevices == null ? List.of() : List.of(a.migDevices))).toList();
                            @SuppressWarnings("unchecked")
                            Map<String, String> pods = row.userPods ? EventCodec.fromJson(row.pods, LinkedHashMap.class) : Map.of();
                            return new ClusterActuator.Gang(new ClusterActuator.GangRef(jobId, row.namespace, row.gangLabel, row.userPods),
                                    EventCodec.fromJson(job.spec, JobQueued.class), tasks, pods, row.attempt);
                        })));
    }

    /**
     * A pod of a launched job is gone and gantry did not delete it (someone ran {@code kubectl
     * delete pod}, or a node drain): the job cannot finish as placed. A job gantry made pods for
     * loses the rest of them and returns to the pending set with its submission time; a user's gang
     * (its operator's pods) only gives up its allocation, its pods are left alone: the first is
     * {@code placements.requeued}, the second {@code placements.failed}, with the reason. Inside a
     * transaction; false when the job is not running (a second notice of the same deletion changes nothing).
     */
    Uni<Boolean> podLost(UUID jobId, String reason) {
        return RunningJobRecord.<RunningJobRecord>findById(jobId).chain(job -> job == null ? Uni.createFrom().item(false)
                : gangs.gangRef(jobId).chain(gang -> {
                    if (gang == null || gang.userPods()) {
                        return executor.release(jobId, Subjects.PLACEMENTS_FAILED, reason);
                    }
                    return launcher.stop(gang).chain(() -> requeue.requeue(job, Subjects.PLACEMENTS_REQUEUED, reason));
                }));
    }
}
