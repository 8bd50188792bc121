package dev.gantry.placement.engine.planner;

import dev.gantry.placement.engine.domain.Plan;
import dev.gantry.placement.engine.domain.Scenario;
import dev.gantry.placement.engine.packing.WorkloadMix;
import java.util.Map;

/**
 * A burst of arrivals planned as the fast path plans one: the fragmentation-aware greedy plan when
 * it places every pending job without stopping or moving anyone, otherwise {@code planner}'s plan.
 *
 * <p>That greedy plan is the solver's own seed, so when everyone fits the solver has nothing to
 * fix, only the soft score to polish, and it would spend a whole window's CPU doing so while the
 * services beside it are handling the burst. A job that does not fit, or fits only by preemption,
 * still gets the full planner.
 */
public final class GreedyWhenAllFit implements Planner {
    /** Metadata key set on a plan this planner took from greedy. */
    public static final String ALL_FIT = "allFit";

    private final Planner greedy;
    private final Planner planner;

    /** {@code mix}: the arrivals the greedy packing keeps room for (may be null). */
    public GreedyWhenAllFit(Planner planner, WorkloadMix mix) {
        this.greedy = new GreedyPlanner(mix);
        this.planner = planner;
    }

    @Override
    public String name() {
        return planner.name();
    }

    @Override
    public boolean movesWork() {
        return planner.movesWork();
    }

    @Override
    public Plan plan(Scenario scenario, SolverProfile profile) {
        Plan quick = greedy.plan(scenario, profile);
        if (quick.unplaced().isEmpty() && quick.preemptions().isEmpty() && quick.migrations().isEmpty()
                && quick.placements().size() == scenario.pending().size()) {
            return quick.withMetadata(Map.of(ALL_FIT, "greedy placed all " + scenario.pending().size()
                    + " pending jobs without moving anyone: the solver was not needed"));
        }
        return planner.plan(scenario, profile);
    }
}
