package dev.gantry.placement.engine.planner;

import dev.gantry.placement.engine.domain.Migration;
import dev.gantry.placement.engine.domain.PendingJob;
import dev.gantry.placement.engine.domain.Placement;
import dev.gantry.placement.engine.domain.Plan;
import dev.gantry.placement.engine.domain.RunningJob;
import dev.gantry.placement.engine.domain.RunningTask;
import dev.gantry.placement.engine.domain.Scenario;
import dev.gantry.placement.engine.packing.ClusterState;
import dev.gantry.placement.engine.packing.GangPacker;
import dev.gantry.placement.engine.packing.MoveShape;
import dev.gantry.placement.engine.packing.PlanAssembler;
import dev.gantry.placement.engine.packing.Replica;
import dev.gantry.placement.engine.validation.PlanValidator;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Moves that make room for one waiting job, found without the solver: a fixed number of greedy
 * steps, so the answer does not depend on how much of the window a loaded machine leaves the
 * solver. The solver is asked first; this is what the window falls back on when the solver ran
 * out of time (it then returns best fit's plan, which never moves anything) or found nothing.
 *
 * <p>Each step moves the one migratable job (off the nodes it runs on, by best fit) that most
 * gathers free GPUs on the nodes the job may use (the sum of their free GPUs squared grows most),
 * until the job fits or {@code maxMoves} jobs have moved. A moving job keeps its old GPUs until
 * it has stopped, so a later move never goes onto them; only the job the moves make room for
 * does. Nobody is evicted.
 */
public final class RoomByMoves {
    /** Destinations tried per moving job and step: best fit's first few are where a good move goes. */
    private static final int DESTINATIONS = 6;

    private RoomByMoves() {
    }

    /**
     * A plan that places {@code job} by moving at most {@code maxMoves} running jobs, valid for
     * {@code sc} and without a move that makes room for nothing; null when no such plan is found.
     */
    public static Plan find(Scenario sc, PendingJob job, int maxMoves) {
        long start = System.nanoTime();
        List<RunningJob> movable = sc.running().stream().filter(RunningJob::migratable).toList();
        if (maxMoves <= 0 || movable.isEmpty()) {
            return null;
        }
        GangPacker packer = new GangPacker(sc.nodes());
        List<Replica> reps = Replica.of(job);
        int[] usable = packer.eligibleNodes(job);
        // where the job goes: moved jobs' old GPUs are free here
        ClusterState forJob = new ClusterState(sc);
        sc.running().forEach(forJob::occupy);
        // where moved jobs go: their old GPUs stay taken until they have stopped
        ClusterState forMoves = forJob.copy();
        List<Migration> moves = new ArrayList<>();
        Set<String> moved = new HashSet<>();
        while (true) {
            GangPacker.GangFit fit = packer.place(forJob, job, reps);
            if (fit != null && fit.complete()) {
                return checked(sc, job, fit, forJob, moves, start);
            }
            if (moves.size() >= maxMoves) {
                return null;
            }
            Step best = null;
            long gathered = gathered(forJob, usable);
            for (RunningJob r : movable) {
                if (moved.contains(r.name())) {
                    continue;
                }
                Step step = bestStep(sc, packer, r, forJob, forMoves, usable);
                if (step != null && step.gathered() > gathered && (best == null || step.gathered() > best.gathered())) {
                    best = step;
                }
            }
            if (best == null) {
                return null; // no move gathers more room: more moves would only shuffle work
            }
            forJob.release(best.job());
            for (GangPacker.Assigned a : best.to().tasks()) {
                forJob.take(a.node(), a.replica(), a.gpus());
                forMoves.take(a.node(), a.replica(), a.gpus());
            }
            moves.add(new Migration(best.job().name(), PlanAssembler.tasks(forMoves, best.to().tasks())));
            moved.add(best.job().name());
        }
    }

    private record Step(RunningJob job, GangPacker.GangFit to, long gathered) {
    }

    /** The job's move, among best fit's first destinations off its nodes, that gathers the most room. */
    private static Step bestStep(Scenario sc, GangPacker packer, RunningJob r, ClusterState forJob, ClusterState forMoves, int[] usable) {
        MoveShape move = MoveShape.of(sc, r);
        Set<Integer> own = new HashSet<>();
        for (RunningTask t : r.tasks()) {
            own.add(forJob.indexOf(t.node()));
        }
        Step best = null;
        forJob.release(r);
        try {
            for (GangPacker.GangFit to : packer.candidates(forMoves, move.shape(), move.replicas(), DESTINATIONS)) {
                if (!to.complete() || to.tasks().stream().anyMatch(a -> own.contains(a.node()))) {
                    continue;
                }
                // free in the job's state too: it frees everything the moves' state does, and more
                to.tasks().forEach(a -> forJob.take(a.node(), a.replica(), a.gpus()));
                long g = gathered(forJob, usable);
                to.tasks().forEach(a -> forJob.release(a.node(), a.replica(), a.gpus()));
                if (best == null || g > best.gathered()) {
                    best = new Step(r, to, g);
                }
            }
        } finally {
            forJob.occupy(r);
        }
        return best;
    }

    /** Free GPUs gathered on the nodes the job may use: their counts squared, summed (one node with 8 beats two with 4). */
    private static long gathered(ClusterState st, int[] usable) {
        long sum = 0;
        for (int node : usable) {
            long free = st.freeGpus(node);
            sum += free * free;
        }
        return sum;
    }

    private static Plan checked(Scenario sc, PendingJob job, GangPacker.GangFit fit, ClusterState forJob, List<Migration> moves, long start) {
        if (moves.isEmpty()) {
            return null; // it fits without moves: not this class's answer
        }
        Placement placement = PlanAssembler.placement(forJob, job.name(), fit.tasks());
        Plan plan = new Plan(Plan.FORMAT, sc.name(), List.of(placement), List.of(), moves, List.of(),
                (System.nanoTime() - start) / 1_000_000, Map.of("movesFoundBy", "greedy moves (no solver)"));
        plan = MovesThatMakeRoom.keep(sc, plan);
        if (plan.placements().isEmpty() || plan.migrations().isEmpty() || !PlanValidator.validate(sc, plan).isEmpty()) {
            return null;
        }
        return plan;
    }
}
