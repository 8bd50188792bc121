package dev.gantry.placement.window;

import dev.gantry.placement.cluster.ClusterActuator;
import dev.gantry.placement.cluster.LeaderFence;
import dev.gantry.placement.cluster.Leadership;
import dev.gantry.placement.engine.domain.Migration;
import dev.gantry.placement.engine.domain.Placement;
import dev.gantry.placement.engine.domain.Plan;
import dev.gantry.placement.engine.domain.Preemption;
import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.jboss.logging.Logger;

/**
 * Applies a validated plan, job by job: preemptions first, then migrations ({@link #migrateAll}), then placements. Each is recorded
 * first, in one transaction with its event in the outbox, so a restart resumes without
 * double-booking ({@link PreemptionRecorder}, {@link PlanRecorder}); then the cluster acts on it
 * ({@link GangLauncher} and the {@link ClusterActuator}: kubernetes mode; in standalone mode the rows
 * are the outcome). A plan's jobs are recorded together in one transaction; should that fail, each
 * is recorded on its own. A victim told first is evicted with its grace; a placement's pods are
 * created and bound all or none, and on failure the allocation is released and the job requeued
 * (or failed, when retrying cannot help). Only the leading replica applies plans; a deposed
 * leader's writes fail at the fence. What was recorded is brought
 * back in line with the cluster afterwards by the {@link Reconciler}, which this class fronts for
 * the pod watcher and the node events.
 */
@ApplicationScoped
public class Binder {

    private static final Logger LOG = Logger.getLogger(Binder.class);
    /** Plan metadata of a scheduled consolidation's moves (the engine's {@code Consolidation}): what they make room for. */
    static final String CONSOLIDATION = "consolidation";

    private final PreemptionRecorder preemptions;
    private final PlanRecorder plans;
    private final GangLauncher launcher;
    private final Reconciler reconciler;
    private final Leadership leadership;

    private final MigrationRecorder migrations;

    public Binder(PreemptionRecorder preemptions, PlanRecorder plans, GangLauncher launcher, Reconciler reconciler, Leadership leadership,
            MigrationRecorder migrations) {
        this.migrations = migrations;
        this.preemptions = preemptions;
        this.plans = plans;
        this.launcher = launcher;
        this.reconciler = reconciler;
        this.leadership = leadership;
    }

    /** Applies the plan; the item is the number of jobs placed (0 on a replica that does not lead). */
    public Uni<Integer> apply(Plan plan, Map<String, String> gpuModelByNode) {
        if (!leadership.leading()) {
            return Uni.createFrom().item(0);
        }
        return preemptAll(plan.preemptions()).chain(() -> migrateAll(plan.migrations(), plan.metadata().get(CONSOLIDATION)))
                .chain(() -> bindAll(plan.placements(), gpuModelByNode));
    }

    /**
     * The plan's moves recorded together, all or none ({@link MigrationRecorder}), then each job told
     * to stop: its pods evicted with its grace in kubernetes mode (an agent reads the stop from its
     * assignments; standalone mode simulates it). The move is finished when the grace ends
     * ({@link Reconciler#finishEvictions}); until then the job holds both its old GPUs and its new
     * ones, so the placement the move makes room for is bound by a later window.
     */
    Uni<Integer> migrateAll(List<Migration> moves, String consolidation) {
        if (moves.isEmpty()) {
            return Uni.createFrom().item(0);
        }
        return migrations.recordAll(moves, consolidation)
                .chain(started -> Multi.createFrom().iterable(started)
                        .onItem().transformToUniAndConcatenate(s -> launcher.evictIfToldOrReleased(
                                new PreemptionRecorder.Preempted(true, s.grace(), s.gang())))
                        .collect().asList().replaceWith(started.size()))
                .onFailure(e -> !(e instanceof LeaderFence.DeposedException)).recoverWithUni(e -> {
                    LOG.warnf("recording %d migrations failed, none applied (replanned next window): %s", moves.size(), e.toString());
                    return Uni.createFrom().item(0);
                });
    }

    /**
     * A plan of moves alone (a scheduled consolidation's): recorded all or none and the jobs told to
     * stop, as {@link #migrateAll}; the item is how many moves were recorded (0 when the binder refused
     * them, e.g. a queue's hourly moves spent, or on a replica that does not lead).
     */
    public Uni<Integer> move(Plan plan) {
        if (!leadership.leading()) {
            return Uni.createFrom().item(0);
        }
        return migrateAll(plan.migrations(), plan.metadata().get(CONSOLIDATION));
    }

    /** The plan's victims recorded together, then their pods evicted; one at a time should recording them together fail. */
    Uni<Void> preemptAll(List<Preemption> victims) {
        if (victims.size() <= 1) {
            return victims.isEmpty() ? Uni.createFrom().voidItem() : preempt(victims.get(0)).replaceWithVoid();
        }
        return preemptions.recordAll(victims)
                .chain(started -> Multi.createFrom().iterable(started)
                        .onItem().transformToUniAndConcatenate(launcher::evictIfToldOrReleased)
                        .collect().asList().replaceWithVoid())
                .onFailure(e -> !(e instanceof LeaderFence.DeposedException)).recoverWithUni(e -> {
                    LOG.warnf("recording %d preemptions together failed, preempting one at a time: %s", victims.size(), e.toString());
                    return Multi.createFrom().iterable(victims).onItem().transformToUniAndConcatenate(this::preempt)
                            .collect().asList().replaceWithVoid();
                });
    }

    Uni<Boolean> preempt(Preemption preemption) {
        UUID jobId = UUID.fromString(preemption.job());
        return preemptions.record(jobId, preemption.reason())
                .call(launcher::evictIfToldOrReleased)
                .map(PreemptionRecorder.Preempted::done)
                .onFailure().recoverWithItem(e -> {
                    LOG.warnf("preempting %s failed, left running: %s", jobId, e.toString());
                    return false;
                });
    }

    Uni<Boolean> bind(Placement placement, Map<String, String> gpuModelByNode) {
        UUID jobId = UUID.fromString(placement.job());
        boolean mine = launcher.claim(jobId); // from before the placement is recorded until its pods are launched
        return plans.record(placement, gpuModelByNode)
                .chain(launcher::launchIfWritten)
                .onFailure().recoverWithItem(e -> {
                    LOG.warnf("binding %s failed, left pending: %s", jobId, e.toString());
                    return false;
                })
                .eventually(() -> {
                    if (mine) {
                        launcher.unclaim(jobId);
                    }
                });
    }

    /**
     * A plan's placements recorded together, then the pods, gang by gang; should recording them
     * together fail, each job is bound on its own, as {@link #bind} does. The item is the number of
     * jobs placed.
     */
    Uni<Integer> bindAll(List<Placement> placements, Map<String, String> gpuModelByNode) {
        if (placements.size() <= 1) {
            return placements.isEmpty() ? Uni.createFrom().item(0)
                    : bind(placements.get(0), gpuModelByNode).map(bound -> bound ? 1 : 0);
        }
        List<UUID> ids = placements.stream().map(p -> UUID.fromString(p.job())).distinct().toList();
        List<UUID> mine = ids.stream().filter(launcher::claim).toList(); // held until the pods are launched
        return plans.recordAll(placements, ids, gpuModelByNode)
                .chain(recorded -> Multi.createFrom().iterable(recorded)
                        .onItem().transformToUniAndConcatenate(launcher::launchIfWritten)
                        .collect().asList()
                        .map(done -> (int) done.stream().filter(Boolean::booleanValue).count()))
                .onFailure(LeaderFence.DeposedException.class).recoverWithUni(e -> {
                    LOG.warnf("%d placements not recorded: %s", placements.size(), e.getMessage());
                    return Uni.createFrom().item(0);
                })
                .onFailure().recoverWithUni(e -> {
                    LOG.warnf("recording %d placements together failed, binding one at a time: %s", placements.size(), e.toString());
                    return Multi.createFrom().iterable(placements).onItem().transformToUniAndConcatenate(p -> bind(p, gpuModelByNode))
                            .collect().asList()
                            .map(done -> (int) done.stream().filter(Boolean::booleanValue).count());
                })
                .eventually(() -> mine.forEach(launcher::unclaim));
    }

    /**
     * {@link Reconciler#finishEviction}: a job told to stop whose tasks have all exited (reported by its
     * agents) is moved now if it was moving (or put back in line if preempted), before its grace ends.
     */
    public Uni<Boolean> finishStop(UUID jobId) {
        return reconciler.finishEviction(jobId);
    }

    /** {@link Reconciler#relaunch()}: placements recorded but never launched, launched again. */
    public Uni<Integer> relaunch() {
        return reconciler.relaunch();
    }

    /** {@link Reconciler#podLost}: a pod deleted outside Gantry. Inside a transaction. */
    public Uni<Boolean> podLost(UUID jobId, String reason) {
        return reconciler.podLost(jobId, reason);
    }

    /** {@link Reconciler#failJobsOn}: every job on a node that is gone goes back to pending. Inside a transaction. */
    public Uni<Void> failJobsOn(String node) {
        return reconciler.failJobsOn(node);
    }
}
