package dev.gantry.placement.engine.planner;

import dev.gantry.placement.engine.packing.ClusterState;
import dev.gantry.placement.engine.packing.GangPacker;
import dev.gantry.placement.engine.packing.Replica;
import dev.gantry.placement.engine.packing.QueueLedger;
import dev.gantry.placement.engine.packing.ReasonAnalyzer;
import dev.gantry.placement.engine.packing.PlanAssembler;

import dev.gantry.placement.engine.domain.PendingJob;
import dev.gantry.placement.engine.domain.Placement;
import dev.gantry.placement.engine.domain.Plan;
import dev.gantry.placement.engine.domain.Scenario;
import dev.gantry.placement.engine.domain.Unplaced;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Strict submission order: the first job that does not fit blocks every later one (no
 * backfilling). The baseline that shows what head-of-line blocking costs.
 */
public final class FifoPlanner implements Planner {

    public static final Comparator<PendingJob> SUBMISSION_ORDER = Comparator.comparingLong(PendingJob::submittedAtSeconds)
            .thenComparing(PendingJob::name);

    @Override
    public String name() {
        return "fifo";
    }

    @Override
    public Plan plan(Scenario sc, SolverProfile profile) {
        long start = System.nanoTime();
        ClusterState st = new ClusterState(sc);
        sc.running().forEach(st::occupy);
        QueueLedger ledger = new QueueLedger(sc);
        GangPacker packer = new GangPacker(sc.nodes());
        List<PendingJob> order = new ArrayList<>(sc.pending());
        order.sort(SUBMISSION_ORDER);
        Map<String, Placement> placed = new HashMap<>();
        Map<String, String> reasons = new HashMap<>();
        String blocker = null;
        ReasonAnalyzer analyzer = new ReasonAnalyzer(sc, st, ledger, packer);
        for (PendingJob job : order) {
            if (blocker != null) {
                reasons.put(job.name(), "blocked behind " + blocker);
                continue;
            }
            List<Replica> reps = Replica.of(job);
            GangPacker.GangFit fit = ledger.headroom(job.queue()) < GangPacker.minGangMilli(job, reps) ? null : packer.place(st, job, reps);
            if (fit == null || ledger.blockedBy(job.queue(), fit.gpuMilli()) != null) {
                blocker = job.name();
                reasons.put(job.name(), analyzer.explain(job));
                continue;
            }
            fit.tasks().forEach(a -> st.take(a.node(), a.replica(), a.gpus()));
            ledger.add(job.queue(), fit.gpuMilli());
            placed.put(job.name(), PlanAssembler.placement(st, job.name(), fit.tasks()));
        }
        List<Placement> placements = new ArrayList<>();
        List<Unplaced> unplaced = new ArrayList<>();
        for (PendingJob job : sc.pending()) {
            if (placed.containsKey(job.name())) {
                placements.add(placed.get(job.name()));
            } else {
                unplaced.add(new Unplaced(job.name(), reasons.get(job.name())));
            }
        }
        long millis = (System.nanoTime() - start) / 1_000_000;
        return new Plan(Plan.FORMAT, sc.name(), placements, List.of(), List.of(), unplaced, millis, Map.of("planner", name()));
    }
}
