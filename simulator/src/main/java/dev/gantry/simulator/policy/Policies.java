package dev.gantry.simulator.policy;

import dev.gantry.placement.engine.planner.Planner;
import dev.gantry.placement.engine.planner.Planners;
import java.util.List;
import java.util.function.ToLongFunction;

/** The policies a replay can drive: the engine's planners (the same the service uses) plus backfill and las. */
public final class Policies {
    public static final List<String> NAMES = List.of("timefold", "greedy", "fifo", "backfill", "las");

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
        if ("las".equals(name)) {
            return new LasPlanner();
        }
        if ("backfill".equals(name)) {
            return new BackfillPlanner(estimatedEnd);
        }
        if (!Planners.NAMES.contains(name)) {
            throw new IllegalArgumentException("unknown policy " + name + " (one of " + String.join(", ", NAMES) + ")");
        }
        Planner p = Planners.byName(name);
        return fastPath && "timefold".equals(name) ? new FastPathPlanner(p) : p;
    }
}
