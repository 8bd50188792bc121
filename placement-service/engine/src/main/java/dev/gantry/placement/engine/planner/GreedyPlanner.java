package dev.gantry.placement.engine.planner;

import dev.gantry.placement.engine.domain.Plan;
import dev.gantry.placement.engine.domain.Scenario;
import dev.gantry.placement.engine.packing.GreedyPass;

/**
 * Gang-aware best-fit bin packing in priority order, then submission order; no preemption, no
 * migration (Volcano's gang + binpack). See {@link GreedyPass}.
 */
public final class GreedyPlanner implements Planner {

    @Override
    public String name() {
        return "greedy";
    }

    @Override
    public Plan plan(Scenario scenario, SolverProfile profile) {
        return GreedyPass.run(scenario, true).plan();
    }
}
