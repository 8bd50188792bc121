package dev.gantry.simulator.policy;

import dev.gantry.placement.engine.domain.PendingJob;
import dev.gantry.placement.engine.domain.Placement;
import dev.gantry.placement.engine.domain.Plan;
import dev.gantry.placement.engine.domain.Scenario;
import dev.gantry.placement.engine.domain.Unplaced;
import dev.gantry.placement.engine.packing.ClusterState;
import dev.gantry.placement.engine.packing.GangPacker;
import dev.gantry.placement.engine.packing.GangPacker.Assigned;
import dev.gantry.placement.engine.packing.GreedyPass;
import dev.gantry.placement.engine.packing.PlanAssembler;
import dev.gantry.placement.engine.packing.Replica;
import dev.gantry.placement.engine.planner.Planner;
import dev.gantry.placement.engine.planner.SolverProfile;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The FGD paper's BestFit baseline, to check the replay against the published figures: each pod
 * goes to the node whose free CPU and GPU after placing it, each over the largest node's, weigh
 * least (half CPU, half GPU; 128 cores and 8 GPUs, as the paper's simulator normalizes).
 * Gantry's {@code greedy} is best fit by GPUs alone; the two differ where CPU runs short first.
 * One pod per job (OpenB's jobs); GPU indices as the engine picks them.
 */
public final class PaperBestFitPlanner implements Planner {
    private static final double MAX_CPU_MILLIS = 128_000;
    private static final double MAX_GPU_MILLI = 8_000;

    @Override
    public String name() {
        return "bestfit-paper";
    }

    @Override
    public Plan plan(Scenario sc, SolverProfile profile) {
        long t0 = System.nanoTime();
        ClusterState st = new ClusterState(sc);
        sc.running().forEach(st::occupy);
        GangPacker packer = new GangPacker(sc.nodes());
        List<PendingJob> order = new ArrayList<>(sc.pending());
        order.sort(GreedyPass.PRIORITY_ORDER);
        List<Placement> placed = new ArrayList<>();
        List<Unplaced> unplaced = new ArrayList<>();
        for (PendingJob job : order) {
            List<Replica> reps = Replica.of(job);
            if (reps.size() != 1) {
                throw new IllegalArgumentException("bestfit-paper places one-pod jobs only; " + job.name() + " has " + reps.size());
            }
            Replica r = reps.getFirst();
            int best = -1;
            int[] bestGpus = null;
            double bestScore = Double.MAX_VALUE;
            for (int n : packer.eligibleNodes(job)) {
                int[] gpus = st.pick(n, r);
                if (gpus == null) {
                    continue;
                }
                double score = 0.5 * (st.cpuFree(n) - r.cpuMillis()) / MAX_CPU_MILLIS
                        + 0.5 * (st.freeMilli(n) - r.gpuMilli()) / MAX_GPU_MILLI;
                if (score < bestScore) {
                    best = n;
                    bestGpus = gpus;
                    bestScore = score;
                }
            }
            if (best < 0) {
                unplaced.add(new Unplaced(job.name(), "no node has room for it"));
                continue;
            }
            st.take(best, r, bestGpus);
            placed.add(PlanAssembler.placement(st, job.name(), List.of(new Assigned(r, best, bestGpus))));
        }
        return new Plan(Plan.FORMAT, sc.name(), placed, List.of(), List.of(), unplaced, (System.nanoTime() - t0) / 1_000_000,
                Map.of("planner", name()));
    }
}
