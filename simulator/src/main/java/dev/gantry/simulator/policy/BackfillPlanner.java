package dev.gantry.simulator.policy;

import dev.gantry.placement.engine.domain.PendingJob;
import dev.gantry.placement.engine.domain.Placement;
import dev.gantry.placement.engine.domain.Plan;
import dev.gantry.placement.engine.domain.RunningJob;
import dev.gantry.placement.engine.domain.Scenario;
import dev.gantry.placement.engine.domain.Unplaced;
import dev.gantry.placement.engine.packing.ClusterState;
import dev.gantry.placement.engine.packing.GangPacker;
import dev.gantry.placement.engine.packing.GreedyPass;
import dev.gantry.placement.engine.packing.PlanAssembler;
import dev.gantry.placement.engine.packing.QueueLedger;
import dev.gantry.placement.engine.packing.Replica;
import dev.gantry.placement.engine.planner.Planner;
import dev.gantry.placement.engine.planner.SolverProfile;
import java.util.ArrayList;
import java.util.Comparator;
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
 * later than its reservation. Same gang packing as greedy and fifo ({@link GangPacker}).
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

    /** What holds GPUs until an estimated time: a running job or a job placed in this window. */
    private record Holder(long end, RunningJob running, List<GangPacker.Assigned> placed) {
    }

    /** The head's reservation: when it can start and the GPUs it will take then. */
    private record Reservation(String head, long start, List<GangPacker.Assigned> gpus) {
    }

    @Override
    public Plan plan(Scenario sc, SolverProfile profile) {
        long t0 = System.nanoTime();
        long now = sc.nowSeconds();
        ClusterState st = new ClusterState(sc);
        sc.running().forEach(st::occupy);
        QueueLedger ledger = new QueueLedger(sc);
        GangPacker packer = new GangPacker(sc.nodes());
        List<Holder> holders = new ArrayList<>();
        for (RunningJob r : sc.running()) {
            holders.add(new Holder(estimatedEnd.applyAsLong(r.name()), r, null));
        }
        List<PendingJob> order = new ArrayList<>(sc.pending());
        order.sort(GreedyPass.PRIORITY_ORDER);
        Map<String, Placement> placed = new HashMap<>();
        Map<String, String> reasons = new HashMap<>();
        Reservation res = null;
        // the current state with the head's reserved GPUs taken: where jobs that outlast the reservation may go
        ClusterState outsideReservation = null;
        for (PendingJob job : order) {
            List<Replica> reps = Replica.of(job);
            if (ledger.headroom(job.queue()) < GangPacker.minGangMilli(job, reps)) {
                reasons.put(job.name(), "queue " + job.queue() + " is at its capability");
                continue;
            }
            long end = job.estimatedRuntimeSeconds() == null ? Long.MAX_VALUE : now + job.estimatedRuntimeSeconds();
            GangPacker.GangFit fit;
            if (res == null || end <= res.start()) {
                fit = packer.place(st, job, reps);
            } else {
                fit = packer.place(outsideReservation, job, reps);
            }
            if (fit != null && fit.complete() && ledger.blockedBy(job.queue(), fit.gpuMilli()) == null) {
                for (GangPacker.Assigned a : fit.tasks()) {
                    st.take(a.node(), a.replica(), a.gpus());
                    if (outsideReservation != null) {
                        outsideReservation.take(a.node(), a.replica(), a.gpus());
                    }
                }
                ledger.add(job.queue(), fit.gpuMilli());
                holders.add(new Holder(end, null, fit.tasks()));
                placed.put(job.name(), PlanAssembler.placement(st, job.name(), fit.tasks()));
                continue;
            }
            if (res != null) {
                reasons.put(job.name(), "backfill: does not fit now without delaying " + res.head() + " (reserved from t=" + res.start() + ")");
                continue;
            }
            res = reserve(st, packer, holders, job, reps);
            if (res == null) {
                reasons.put(job.name(), "does not fit even when every running job has ended; skipped by the reservation");
                continue;
            }
            reasons.put(job.name(), "head of the queue: reserved from t=" + res.start());
            outsideReservation = st.copy();
            for (GangPacker.Assigned a : res.gpus()) {
                // taking a GPU that is busy now is harmless here: this state only answers "is it free and not reserved"
                outsideReservation.take(a.node(), a.gpus(), a.replica().milli(), 0, 0);
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
        if (res != null) {
            meta.put("reservation", res.head() + "@" + res.start());
        }
        return new Plan(Plan.FORMAT, sc.name(), placements, List.of(), List.of(), unplaced, millis, meta);
    }

    /** Releases holders in order of estimated end until the head fits; null if it never does. */
    private static Reservation reserve(ClusterState st, GangPacker packer, List<Holder> holders, PendingJob head, List<Replica> reps) {
        ClusterState future = st.copy();
        List<Holder> byEnd = new ArrayList<>(holders);
        byEnd.sort(Comparator.comparingLong(Holder::end));
        for (int i = 0; i < byEnd.size(); i++) {
            Holder h = byEnd.get(i);
            if (h.end() == Long.MAX_VALUE) {
                break;
            }
            release(future, h);
            // every holder ending at the same moment frees its GPUs before we look
            while (i + 1 < byEnd.size() && byEnd.get(i + 1).end() == h.end()) {
                release(future, byEnd.get(++i));
            }
            GangPacker.GangFit fit = packer.place(future, head, reps);
            if (fit != null && fit.complete()) {
                return new Reservation(head.name(), h.end(), fit.tasks());
            }
        }
        return null;
    }

    private static void release(ClusterState st, Holder h) {
        if (h.running() != null) {
            st.release(h.running());
        } else {
            h.placed().forEach(a -> st.release(a.node(), a.replica(), a.gpus()));
        }
    }
}
