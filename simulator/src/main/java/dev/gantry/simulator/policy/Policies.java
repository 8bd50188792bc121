package dev.gantry.simulator.policy;

import dev.gantry.placement.engine.packing.WorkloadMix;
import dev.gantry.placement.engine.planner.Planner;
import dev.gantry.placement.engine.planner.Planners;
import java.util.List;
import java.util.function.ToLongFunction;

/**
 * The policies a replay can drive: the engine's planners (the same the service uses) plus
 * backfill and las, and {@code greedy-frag}: the fragmentation-aware greedy pass the solver
 * starts from (the service's fast path), to see what the solver adds to it; {@code bestfit-paper}:
 * the FGD paper's BestFit score, to check the OpenB replay against its published figures.
 */
public final class Policies {
    public static final List<String> NAMES = List.of("timefold", "greedy", "fifo", "backfill", "las", "greedy-frag", "bestfit-paper");

    private Policies() {
    }

    /** @param estimatedEnd running job -> estimated end, for backfill's reservation */
    public static Planner create(String name, ToLongFunction<String> estimatedEnd) {
        return create(name, estimatedEnd, false);
    }

    /**
         * @param fastPath skip the solver where greedy places every waiting job (see {@link FastPathPlanner})
     */
    public static Planner create(String name, ToLongFunction<String> estimatedEnd, boolean fastPath) {
        return create(name, estimatedEnd, fastPath, null);
    }

    /**
     * @param mix the arrivals so far, which Gantry's fragmentation gauge keeps room for (the
     *     replay records them; null: each window's own workload)
     */
    public static Planner create(String name, ToLongFunction<String> estimatedEnd, boolean fastPath, WorkloadMix mix) {
        if ("bestfit-paper".equals(name)) {
            return new PaperBestFitPlanner();
        }
        if ("greedy-frag".equals(name)) {
            return Planners.fastPath(mix);
        }
        if ("las".equals(name)) {
            return new LasPlanner();
        }
        if ("backfill".equals(name)) {
            return new BackfillPlanner(estimatedEnd);
        }
        if (!Planners.NAMES.contains(name)) {
            throw new IllegalArgumentException("unknown policy " + name + " (one of " + String.join(", ", NAMES) + ")");
        }
        Planner p = Planners.byName(name, mix);
        return fastPath && "timefold".equals(name) ? new FastPathPlanner(p, mix) : p;
    }
}
