package dev.gantry.placement.engine.solver;

import dev.gantry.placement.engine.domain.PendingJob;
import dev.gantry.placement.engine.domain.RunningJob;
import dev.gantry.placement.engine.domain.Scenario;
import java.util.Map;
import java.util.Set;

/**
 * The Timefold problem built from a scenario, with the lookups to turn a solution back into a plan;
 * {@code towardFairShare}: reclaim worked toward fair shares, not only guarantees ({@code fairShareTrees}: in
 * the trees under these root queues; empty: every tree).
 */
public record PlacementModel(Scenario scenario, PlacementSolution solution, Map<String, PendingJob> pending, Map<String, RunningJob> running,
        int optionCount, boolean towardFairShare, Set<String> fairShareTrees) {

    public PlacementModel {
        fairShareTrees = fairShareTrees == null ? Set.of() : Set.copyOf(fairShareTrees);
    }

    public PlacementModel(Scenario scenario, PlacementSolution solution, Map<String, PendingJob> pending, Map<String, RunningJob> running,
            int optionCount) {
        this(scenario, solution, pending, running, optionCount, false, Set.of());
    }
}
