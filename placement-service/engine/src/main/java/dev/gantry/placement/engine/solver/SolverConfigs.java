package dev.gantry.placement.engine.solver;

import ai.timefold.solver.core.api.domain.solution.ConstraintWeightOverrides;
import ai.timefold.solver.core.api.score.HardMediumSoftScore;
import ai.timefold.solver.core.config.heuristic.selector.move.composite.UnionMoveSelectorConfig;
import ai.timefold.solver.core.config.heuristic.selector.move.factory.MoveIteratorFactoryConfig;
import ai.timefold.solver.core.config.heuristic.selector.move.generic.ChangeMoveSelectorConfig;
import ai.timefold.solver.core.config.localsearch.LocalSearchPhaseConfig;
import ai.timefold.solver.core.config.phase.custom.CustomPhaseConfig;
import ai.timefold.solver.core.config.localsearch.decider.acceptor.LocalSearchAcceptorConfig;
import ai.timefold.solver.core.config.localsearch.decider.forager.LocalSearchForagerConfig;
import ai.timefold.solver.core.config.solver.EnvironmentMode;
import ai.timefold.solver.core.config.solver.SolverConfig;
import ai.timefold.solver.core.config.solver.termination.TerminationConfig;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The solver configuration, in code so the engine needs no config files. Knobs:
 * <ul>
 *   <li>no construction heuristic: the solution starts from greedy's plan (every entity is
 *       already initialized; null is a legal value), so the first best solution is greedy's;</li>
 *   <li>{@link ImprovementPhase}: a deterministic evict-and-place pass over the gangs that want a
 *       home, most valuable first, for at most half the window;</li>
 *   <li>local search with late acceptance, size 3 (measured on the benchmark: 3 beat 10, 50
 *       and 400 at 200 and 1,000 nodes; the evict-and-place move already makes the big jumps,
 *       so the walk needs little slack); {@code -Dgantry.lateAcceptance=N} overrides it;</li>
 *   <li>moves: evict-and-place (places a gang and moves what is in its way) and plain change
 *       moves (fine tuning of soft scores), picked 1:1;</li>
 *   <li>termination: the profile's spent limit (deadline) and unimproved-time limit; or, in the
 *       reproducible configuration ({@link #reproducible}), a move count and a fixed seed.</li>
 * </ul>
 */
public final class SolverConfigs {
    static final int LATE_ACCEPTANCE_SIZE = Integer.getInteger("gantry.lateAcceptance", 3);

    private SolverConfigs() {
    }

    public static SolverConfig create(Duration spentLimit, Duration unimprovedLimit, boolean fullAssert) {
        // the deterministic pass takes at most half the window, local search the rest
        var improvement = new CustomPhaseConfig()
                .withCustomPhaseCommands(new ImprovementPhase())
                .withTerminationConfig(new TerminationConfig().withSpentLimit(Duration.ofMillis(Math.max(1, spentLimit.toMillis() / 2))));
        return new SolverConfig()
                .withSolutionClass(PlacementSolution.class)
                .withEntityClasses(GangAssignment.class)
                .withConstraintProviderClass(PlacementConstraintProvider.class)
                .withEnvironmentMode(fullAssert ? EnvironmentMode.FULL_ASSERT : EnvironmentMode.NON_REPRODUCIBLE)
                .withTerminationConfig(new TerminationConfig().withSpentLimit(spentLimit).withUnimprovedSpentLimit(unimprovedLimit))
                .withPhases(improvement, localSearch());
    }

    /**
     * The same phases bound by work instead of time, with a fixed random seed: the same window
     * gives the same plan on any machine and under any load (replays whose figures must repeat).
     * The improvement pass runs to its end (it tries a bounded number of options per gang); local
     * search evaluates at most {@code moveLimit} moves, and stops after {@code moveLimit / 4}
     * steps without a better solution (the stall limit's counterpart).
     */
    public static SolverConfig reproducible(long moveLimit, boolean fullAssert) {
        var improvement = new CustomPhaseConfig().withCustomPhaseCommands(new ImprovementPhase());
        var localSearch = localSearch().withTerminationConfig(new TerminationConfig()
                .withMoveCountLimit(moveLimit)
                .withUnimprovedStepCountLimit((int) Math.max(1, Math.min(Integer.MAX_VALUE, moveLimit / 4))));
        return new SolverConfig()
                .withSolutionClass(PlacementSolution.class)
                .withEntityClasses(GangAssignment.class)
                .withConstraintProviderClass(PlacementConstraintProvider.class)
                .withEnvironmentMode(fullAssert ? EnvironmentMode.FULL_ASSERT : EnvironmentMode.NO_ASSERT)
                .withRandomSeed(0L)
                .withPhases(improvement, localSearch);
    }

    private static LocalSearchPhaseConfig localSearch() {
        var changeMoves = new ChangeMoveSelectorConfig().withFixedProbabilityWeight(1.0);
        var evictMoves = new MoveIteratorFactoryConfig()
                .withMoveIteratorFactoryClass(EvictAndPlaceMoveFactory.class)
                .withFixedProbabilityWeight(1.0);
        return new LocalSearchPhaseConfig()
                .withMoveSelectorConfig(new UnionMoveSelectorConfig().withMoveSelectorList(List.of(evictMoves, changeMoves)))
                .withAcceptorConfig(new LocalSearchAcceptorConfig().withLateAcceptanceSize(LATE_ACCEPTANCE_SIZE))
                .withForagerConfig(new LocalSearchForagerConfig().withAcceptedCountLimit(1));
    }

    /**
     * Weight overrides for medium and soft constraints (name -> weight at the constraint's own
     * level). Hard constraints are validity and cannot be reweighted.
     *
     * @throws IllegalArgumentException naming the constraint, for a hard or unknown one or a negative weight
     */
    public static ConstraintWeightOverrides<HardMediumSoftScore> weights(Map<String, Long> overrides) {
        if (overrides == null || overrides.isEmpty()) {
            return ConstraintWeightOverrides.none();
        }
        Map<String, HardMediumSoftScore> out = new HashMap<>();
        for (var e : overrides.entrySet()) {
            String name = e.getKey();
            long w = e.getValue();
            if (PlacementConstraintProvider.HARD_CONSTRAINTS.contains(name)) {
                throw new IllegalArgumentException("constraint \"" + name + "\" is hard (a validity rule) and cannot be overridden");
            }
            if (w < 0) {
                throw new IllegalArgumentException("constraint \"" + name + "\": weight must be >= 0, got " + w);
            }
            if (PlacementConstraintProvider.MEDIUM_CONSTRAINTS.contains(name)) {
                out.put(name, HardMediumSoftScore.ofMedium(w));
            } else if (PlacementConstraintProvider.SOFT_CONSTRAINTS.contains(name)) {
                out.put(name, HardMediumSoftScore.ofSoft(w));
            } else {
                throw new IllegalArgumentException("unknown constraint \"" + name + "\" (medium: " + PlacementConstraintProvider.MEDIUM_CONSTRAINTS
                        + ", soft: " + PlacementConstraintProvider.SOFT_CONSTRAINTS + ")");
            }
        }
        return ConstraintWeightOverrides.of(out);
    }
}
