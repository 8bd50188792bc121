package dev.gantry.simulator.policy;

import dev.gantry.placement.engine.domain.Plan;
import dev.gantry.placement.engine.domain.Scenario;
import dev.gantry.placement.engine.packing.GangPacker;
import dev.gantry.placement.engine.packing.GreedyPass;
import dev.gantry.placement.engine.packing.WorkloadMix;
import dev.gantry.placement.engine.planner.Planner;
import dev.gantry.placement.engine.planner.SolverProfile;
import java.util.Map;

/**
 * Skips the solver in windows where greedy already places every waiting job: the solver starts
 * from greedy's plan and its medium score (unplaced and preempted GPUs) cannot improve on zero,
 * so only soft terms (fragmentation, preferred network) could change. A trace replay has tens of
 * thousands of such windows; without this, each one costs the solver's stall limit. Disabled
 * with {@code --no-fast-path}; the report counts how many windows took it.
 */
public final class FastPathPlanner implements Planner {
    private final Planner solver;
    private final WorkloadMix mix;

    /** @param mix the arrivals the fragmentation gauge keeps room for, as the solver's (may be null) */
    public FastPathPlanner(Planner solver, WorkloadMix mix) {
        this.solver = solver;
        this.mix = mix;
    }

    @Override
    public String name() {
        return solver.name();
    }

    @Override
    public Plan plan(Scenario scenario, SolverProfile profile) {
        // the same fragmentation-aware pass the solver starts from and the service's fast path runs
        GreedyPass.Result greedy = GreedyPass.run(scenario, false, GangPacker.forWindow(scenario, mix, profile.gpuSpeeds()));
        if (greedy.plan().unplaced().isEmpty()) {
            return greedy.plan().withMetadata(Map.of("planner", solver.name(), "fastPath", "greedy placed every job"));
        }
        return solver.plan(scenario, profile);
    }
}
