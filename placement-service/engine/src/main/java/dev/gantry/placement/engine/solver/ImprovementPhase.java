package dev.gantry.placement.engine.solver;

import ai.timefold.solver.core.api.score.HardMediumSoftScore;
import ai.timefold.solver.core.api.solver.phase.PhaseCommand;
import ai.timefold.solver.core.api.solver.phase.PhaseCommandContext;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * A deterministic pass before local search, like Volcano's preempt and reclaim actions but
 * scored: the gangs that want a home, most valuable first (priority-weighted GPUs), each try
 * their options in best-fit order as evict-and-place moves; the first move that improves the
 * score is kept. Cheap large gains come first; local search then works on what is left.
 */
public final class ImprovementPhase implements PhaseCommand<PlacementSolution> {
    /** Options tried per gang: the first ones are the best fits. */
    static final int OPTIONS_PER_GANG = 4;

    @Override
    public void changeWorkingSolution(PhaseCommandContext<PlacementSolution> context) {
        EvictAndPlaceMoveFactory moves = new EvictAndPlaceMoveFactory();
        PlacementSolution solution = context.getWorkingSolution();
        moves.sync(solution);
        List<GangAssignment> targets = new ArrayList<>(moves.wanting());
        targets.sort(Comparator.comparingLong((GangAssignment a) -> a.gpuWeight() * a.gpuMilli()).reversed()
                .thenComparing(GangAssignment::getJob));
        HardMediumSoftScore current = context.executeTemporarilyAndCalculateScore(new EvictAndPlaceMove(List.of(), List.of()));
        for (GangAssignment target : targets) {
            if (context.isPhaseTerminated()) {
                return;
            }
            if (target.getOption() != null) {
                continue; // placed meanwhile as the alternative of another move
            }
            List<PlacementOption> options = target.getOptions();
            for (int i = 0; i < Math.min(OPTIONS_PER_GANG, options.size()); i++) {
                EvictAndPlaceMove move = moves.moveFor(target, options.get(i));
                if (move == null) {
                    continue;
                }
                HardMediumSoftScore score = context.executeTemporarilyAndCalculateScore(move);
                if (score.compareTo(current) > 0) {
                    context.execute(move);
                    current = score;
                    moves.sync(solution);
                    break;
                }
            }
        }
    }
}
