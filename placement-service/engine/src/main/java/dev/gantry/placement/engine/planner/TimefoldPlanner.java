package dev.gantry.placement.engine.planner;

import dev.gantry.placement.engine.domain.Plan;
import dev.gantry.placement.engine.domain.Scenario;

/** Placeholder until the Timefold model lands: plans like greedy. */
public final class TimefoldPlanner implements Planner {
    @Override
    public String name() {
        return "timefold";
    }

    @Override
    public Plan plan(Scenario scenario, SolverProfile profile) {
        return new GreedyPlanner().plan(scenario, profile).withMetadata(java.util.Map.of("planner", name(), "fallback", "greedy"));
    }
}
