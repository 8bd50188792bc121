package dev.gantry.simulator.policy;

import dev.gantry.placement.engine.domain.PendingJob;
import dev.gantry.placement.engine.domain.Placement;
import dev.gantry.placement.engine.domain.Plan;
import dev.gantry.placement.engine.domain.Scenario;
import dev.gantry.placement.engine.domain.Unplaced;
import dev.gantry.placement.engine.packing.EasyBackfill;
import dev.gantry.placement.engine.packing.GangPacker;
import dev.gantry.placement.engine.packing.GreedyPass;
import dev.gantry.placement.engine.packing.PlanAssembler;
import dev.gantry.placement.engine.planner.Planner;
import dev.gantry.placement.engine.planner.SolverProfile;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.ToLongFunction;

/**
 * EASY backfilling (Lifka's, as in Slurm's backfill without multiple reservations): jobs in
 * priority then submission order start while they fit; the first that does not fit (the head)
 * gets one reservation: the earliest estimated time at which it fits once running work ends,
 * and the GPUs it would take then. Later jobs may start now if they end (by their estimate)
 * before that time, or if they keep off the head's reserved GPUs, so the head never starts
 * later than its reservation. Same gang packing as greedy and fifo ({@link GangPacker}); the
 * bookkeeping is the engine's {@link EasyBackfill}, which the {@code timefold} policy's
 * reservation uses too.
 *
 * <p>Runtime estimates: a pending job's {@code estimatedRuntimeSeconds}; a running job's end
 * comes from {@code estimatedEnd} (the simulator knows it; a scenario does not carry it).
 */
public final class BackfillPlanner implements Planner {
    private final ToLongFunction<String> estimatedEnd;

    /** @param estimatedEnd running job name -> estimated end (absolute seconds, as the scenario's clock); Long.MAX_VALUE if unknown */
    public BackfillPlanner(ToLongFunction<String> estimatedEnd) {
        this.estimatedEnd = estimatedEnd;
    }

    @Override
    public String name() {
        return "backfill";
    }

    @Override
    public Plan plan(Scenario sc, SolverProfile profile) {
        long t0 = System.nanoTime();
        EasyBackfill easy = new EasyBackfill(sc, new GangPacker(sc.nodes()), estimatedEnd);
        List<PendingJob> order = new ArrayList<>(sc.pending());
        order.sort(GreedyPass.PRIORITY_ORDER);
        Map<String, Placement> placed = new HashMap<>();
        Map<String, String> reasons = new HashMap<>();
        for (PendingJob job : order) {
            EasyBackfill.Outcome outcome = easy.offer(job);
            EasyBackfill.Reservation res = easy.reservation();
            switch (outcome) {
                case STARTED -> placed.put(job.name(), PlanAssembler.placement(easy.state(), job.name(), easy.lastFit().tasks()));
                case OVER_CAPABILITY -> reasons.put(job.name(), "queue " + job.queue() + " is at its capability");
                case HELD_BACK -> reasons.put(job.name(),
                        "backfill: does not fit now without delaying " + res.head() + " (reserved from t=" + res.start() + ")");
                case RESERVED -> reasons.put(job.name(), "head of the queue: reserved from t=" + res.start());
                case NEVER_FITS -> reasons.put(job.name(), "does not fit even when every running job has ended; skipped by the reservation");
            }
        }
        List<Placement> placements = new ArrayList<>();
        List<Unplaced> unplaced = new ArrayList<>();
        for (PendingJob job : sc.pending()) {
            if (placed.containsKey(job.name())) {
                placements.add(placed.get(job.name()));
            } else {
                unplaced.add(new Unplaced(job.name(), reasons.getOrDefault(job.name(), "not placed")));
            }
        }
        long millis = (System.nanoTime() - t0) / 1_000_000;
        Map<String, String> meta = new HashMap<>();
        meta.put("planner", name());
        if (easy.reservation() != null) {
            meta.put("reservation", easy.reservation().head() + "@" + easy.reservation().start());
        }
        return new Plan(Plan.FORMAT, sc.name(), placements, List.of(), List.of(), unplaced, millis, meta);
    }
}
