package dev.gantry.placement.engine.planner;

import dev.gantry.placement.engine.domain.PendingJob;
import dev.gantry.placement.engine.domain.Placement;
import dev.gantry.placement.engine.domain.Plan;
import dev.gantry.placement.engine.domain.Preemption;
import dev.gantry.placement.engine.domain.Queue;
import dev.gantry.placement.engine.domain.RunningJob;
import dev.gantry.placement.engine.domain.Scenario;
import dev.gantry.placement.engine.domain.TaskPlacement;
import dev.gantry.placement.engine.packing.FairShares;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;

/**
 * How far a plan leaves queues under their guarantees (milli-GPUs, summed over queues): per queue,
 * the part of its guarantee it can use (its guarantee, or all it runs and waits for when that is
 * less) less what it holds after the plan. The solver's {@code Guarantee shortfall} term, measured
 * on a plan, so the safety net never trades a restored guarantee back for priority-weighted GPUs.
 * With reclaim toward the fair share a queue's entitlement is the larger of its guarantee and its
 * fair share ({@link FairShares}), so the net does not undo a fair-share reclaim either.
 */
final class GuaranteeShortfall {

    private GuaranteeShortfall() {
    }

    static long milli(Scenario sc, Plan plan) {
        return milli(sc, plan, false);
    }

    /** @param towardFairShare count the fair share as part of what a queue is entitled to */
    static long milli(Scenario sc, Plan plan, boolean towardFairShare) {
        return milli(sc, plan, towardFairShare, Set.of());
    }

    /** @param fairShareTrees with {@code towardFairShare}, the root queues whose trees count it (empty: every tree) */
    static long milli(Scenario sc, Plan plan, boolean towardFairShare, Set<String> fairShareTrees) {
        Map<String, Long> fair = towardFairShare ? FairShares.milli(sc, fairShareTrees) : Map.of();
        Map<String, Long> demand = new HashMap<>();
        Map<String, Long> held = new HashMap<>();
        Set<String> preempted = new HashSet<>();
        for (Preemption p : plan.preemptions()) {
            preempted.add(p.job());
        }
        for (RunningJob r : sc.running()) {
            demand.merge(r.queue(), r.gpuMilli(), Long::sum);
            if (!preempted.contains(r.name())) {
                held.merge(r.queue(), r.gpuMilli(), Long::sum);
            }
        }
        Map<String, PendingJob> pending = new HashMap<>();
        for (PendingJob p : sc.pending()) {
            demand.merge(p.queue(), p.gpuMilli(), Long::sum);
            pending.put(p.name(), p);
        }
        for (Placement pl : plan.placements()) {
            PendingJob job = pending.get(pl.job());
            if (job == null) {
                continue;
            }
            long milli = 0;
            for (TaskPlacement t : pl.tasks()) {
                milli += t.gpuMilli() != null ? t.gpuMilli() : 1000L * t.gpus().size();
                if (!t.migDevices().isEmpty()) {
                    milli += job.taskGroupOf(t.task()).replicaGpuMilli();
                }
            }
            held.merge(job.queue(), milli, Long::sum);
        }
        long shortfall = 0;
        for (Queue q : sc.queues()) {
            long entitled = Math.max(q.guaranteeGpus() * 1000L, fair.getOrDefault(q.name(), 0L));
            long need = Math.min(entitled, demand.getOrDefault(q.name(), 0L));
            shortfall += Math.max(0, need - held.getOrDefault(q.name(), 0L));
        }
        return shortfall;
    }
}
