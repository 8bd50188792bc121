package dev.gantry.placement.engine.packing;

import dev.gantry.placement.engine.domain.PendingJob;
import dev.gantry.placement.engine.domain.Placement;
import dev.gantry.placement.engine.domain.Plan;
import dev.gantry.placement.engine.domain.Scenario;
import dev.gantry.placement.engine.domain.Unplaced;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One greedy pass: gang-aware best-fit bin packing in priority order, then submission order; no
 * preemption, no migration (Volcano's gang + binpack). The greedy planner, and the solver's seed
 * and safety net.
 */
public final class GreedyPass {

    /** Priority first (larger first), then the older submission, then the name for determinism. */
    public static final Comparator<PendingJob> PRIORITY_ORDER = Comparator.comparingInt(PendingJob::priority).reversed()
            .thenComparingLong(PendingJob::submittedAtSeconds)
            .thenComparing(PendingJob::name);

    /** The greedy outcome with its working state, for the solver to start from. */
    public record Result(Plan plan, ClusterState state, QueueLedger ledger, Map<String, GangPacker.GangFit> fits) {
    }

    private GreedyPass() {
    }

    /**
     * Runs the pass; {@code explain} adds a reason per unplaced job (costly at scale: the solver's
     * seed does without until it falls back, see {@link #explained}).
     */
    public static Result run(Scenario sc, boolean explain) {
        return run(sc, explain, new GangPacker(sc.nodes()));
    }

    /**
     * The pass with a given packer: {@link GangPacker#forWindow} packs by expected fragmentation
     * (Gantry's own seed and fast path), a plain one by GPUs left over (the Volcano baseline).
     */
    public static Result run(Scenario sc, boolean explain, GangPacker packer) {
        long start = System.nanoTime();
        ClusterState st = new ClusterState(sc);
        sc.running().forEach(st::occupy);
        QueueLedger ledger = new QueueLedger(sc);
        Map<String, GangPacker.GangFit> fits = new LinkedHashMap<>();
        List<PendingJob> order = new ArrayList<>(sc.pending());
        order.sort(PRIORITY_ORDER);
        for (PendingJob job : order) {
            List<Replica> reps = Replica.of(job);
            if (ledger.headroom(job.queue()) < GangPacker.minGangMilli(job, reps)) {
                continue;
            }
            GangPacker.GangFit fit = packer.place(st, job, reps);
            if (fit == null || ledger.blockedBy(job.queue(), fit.gpuMilli()) != null) {
                continue;
            }
            fit.tasks().forEach(a -> st.take(a.node(), a.replica(), a.gpus()));
            ledger.add(job.queue(), fit.gpuMilli());
            fits.put(job.name(), fit);
        }
        List<Placement> placements = new ArrayList<>();
        List<Unplaced> unplaced = new ArrayList<>();
        ReasonAnalyzer reasons = explain ? new ReasonAnalyzer(sc, st, ledger, packer) : null;
        for (PendingJob job : sc.pending()) {
            GangPacker.GangFit fit = fits.get(job.name());
            if (fit != null) {
                placements.add(PlanAssembler.placement(st, job.name(), fit.tasks()));
            } else {
                unplaced.add(new Unplaced(job.name(), reasons == null ? "not placed by greedy" : reasons.explain(job)));
            }
        }
        long millis = (System.nanoTime() - start) / 1_000_000;
        Plan plan = new Plan(Plan.FORMAT, sc.name(), placements, List.of(), List.of(), unplaced, millis, Map.of("planner", "greedy"));
        return new Result(plan, st, ledger, fits);
    }

    /** The same plan with a reason for every unplaced job, from the result's final state. */
    public static Plan explained(Scenario sc, Result r) {
        ReasonAnalyzer reasons = new ReasonAnalyzer(sc, r.state(), r.ledger(), new GangPacker(sc.nodes()));
        Map<String, PendingJob> byName = new java.util.HashMap<>();
        sc.pending().forEach(p -> byName.put(p.name(), p));
        List<Unplaced> unplaced = r.plan().unplaced().stream().map(u -> new Unplaced(u.job(), reasons.explain(byName.get(u.job())))).toList();
        Plan p = r.plan();
        return new Plan(p.format(), p.scenario(), p.placements(), p.preemptions(), p.migrations(), unplaced, p.solveMillis(), p.metadata());
    }

}
