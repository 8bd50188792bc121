package dev.gantry.simulator.policy;

import dev.gantry.placement.engine.domain.PendingJob;
import dev.gantry.placement.engine.domain.Placement;
import dev.gantry.placement.engine.domain.Plan;
import dev.gantry.placement.engine.domain.Preemption;
import dev.gantry.placement.engine.domain.RunningJob;
import dev.gantry.placement.engine.domain.RunningTask;
import dev.gantry.placement.engine.domain.Scenario;
import dev.gantry.placement.engine.domain.Unplaced;
import dev.gantry.placement.engine.packing.ClusterState;
import dev.gantry.placement.engine.packing.GangPacker;
import dev.gantry.placement.engine.packing.PlanAssembler;
import dev.gantry.placement.engine.packing.QueueLedger;
import dev.gantry.placement.engine.packing.Replica;
import dev.gantry.placement.engine.planner.Planner;
import dev.gantry.placement.engine.planner.SolverProfile;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Tiresias-like discretized least-attained-service (Gu et al., NSDI'19), two levels: jobs that
 * have received less than {@link #DEFAULT_THRESHOLD_GPU_SECONDS} of GPU service come first, the
 * rest after; first come, first served within a level. The level is carried as the job's
 * priority ({@link #servicePriority}, set by the replay, which knows the service each job got),
 * so the plan's preemptions are justified in FORMAT.md's own terms (a higher-priority job of the
 * queue placed, or reclaim across queues). Running preemptible jobs compete too: a waiting job
 * takes free GPUs if it can, and otherwise evicts running jobs of a lower priority (which
 * resume later from their checkpoint).
 */
public final class LasPlanner implements Planner {
    /** One GPU-hour, the kind of first threshold Tiresias uses to separate short jobs from long ones. */
    public static final long DEFAULT_THRESHOLD_GPU_SECONDS = 3600;

    /** The priority a job gets in a las window: its own, doubled, plus one while it is under the threshold. */
    public static int servicePriority(int priority, long attainedGpuSeconds) {
        long p = 2L * priority + (attainedGpuSeconds < DEFAULT_THRESHOLD_GPU_SECONDS ? 1 : 0);
        return (int) Math.max(Integer.MIN_VALUE, Math.min(Integer.MAX_VALUE, p));
    }

    @Override
    public String name() {
        return "las";
    }

    private record Entry(int level, long submitted, String name, PendingJob pending, RunningJob running) {
    }

    @Override
    public Plan plan(Scenario sc, SolverProfile profile) {
        long t0 = System.nanoTime();
        List<Entry> entries = new ArrayList<>();
        // every running job's GPUs, and only the pinned ones: the first is "free GPUs only", the second "may evict"
        ClusterState all = new ClusterState(sc);
        ClusterState kept = new ClusterState(sc);
        for (RunningJob r : sc.running()) {
            all.occupy(r);
            if (r.preemptible()) {
                entries.add(new Entry(-r.priority(), r.startedAtSeconds(), r.name(), null, r));
            } else {
                kept.occupy(r);
            }
        }
        for (PendingJob p : sc.pending()) {
            entries.add(new Entry(-p.priority(), p.submittedAtSeconds(), p.name(), p, null));
        }
        entries.sort(Comparator.comparingInt(Entry::level).thenComparingLong(Entry::submitted).thenComparing(Entry::name));
        QueueLedger ledger = new QueueLedger(sc);
        GangPacker packer = new GangPacker(sc.nodes());
        Set<String> evicted = new HashSet<>();
        Map<String, Placement> placed = new HashMap<>();
        Map<String, String> evictor = new HashMap<>();
        for (int i = 0; i < entries.size(); i++) {
            Entry e = entries.get(i);
            if (e.running() != null) {
                if (!evicted.contains(e.name())) {
                    kept.occupy(e.running());
                }
                continue;
            }
            PendingJob job = e.pending();
            List<Replica> reps = Replica.of(job);
            if (ledger.headroom(job.queue()) < GangPacker.minGangMilli(job, reps)) {
                continue;
            }
            GangPacker.GangFit fit = packer.place(all, job, reps);
            List<RunningJob> victims = List.of();
            if (fit == null || !fit.complete()) {
                fit = packer.place(kept, job, reps);
                if (fit != null && fit.complete()) {
                    victims = victims(entries, i, e.level(), evicted, fit, all);
                    if (victims == null) {
                        fit = null;
                    }
                }
            }
            if (fit == null || !fit.complete() || ledger.blockedBy(job.queue(), fit.gpuMilli()) != null) {
                continue;
            }
            for (RunningJob v : victims) {
                evicted.add(v.name());
                evictor.put(v.name(), job.name());
                all.release(v);
            }
            for (GangPacker.Assigned a : fit.tasks()) {
                all.take(a.node(), a.replica(), a.gpus());
                kept.take(a.node(), a.replica(), a.gpus());
            }
            ledger.add(job.queue(), fit.gpuMilli());
            placed.put(job.name(), PlanAssembler.placement(all, job.name(), fit.tasks()));
        }
        List<Placement> placements = new ArrayList<>();
        List<Unplaced> unplaced = new ArrayList<>();
        for (PendingJob job : sc.pending()) {
            if (placed.containsKey(job.name())) {
                placements.add(placed.get(job.name()));
            } else {
                unplaced.add(new Unplaced(job.name(), "las: no room at its priority (" + job.priority() + ")"));
            }
        }
        List<Preemption> preemptions = sc.running().stream().filter(r -> evicted.contains(r.name()))
                .map(r -> new Preemption(r.name(), "las: " + evictor.get(r.name()) + " has received less GPU service (higher priority)")).toList();
        return new Plan(Plan.FORMAT, sc.name(), placements, preemptions, List.of(), unplaced, (System.nanoTime() - t0) / 1_000_000,
                Map.of("planner", name()));
    }

    /** Running jobs of a lower priority, not yet kept, whose GPUs the fit uses; null if a job of the same priority or higher would have to go. */
    private static List<RunningJob> victims(List<Entry> entries, int from, int level, Set<String> evicted, GangPacker.GangFit fit,
            ClusterState all) {
        Map<String, Set<Integer>> used = new HashMap<>();
        for (GangPacker.Assigned a : fit.tasks()) {
            Set<Integer> gpus = used.computeIfAbsent(all.node(a.node()).name(), k -> new HashSet<>());
            for (int g : a.gpus()) {
                gpus.add(g);
            }
        }
        List<RunningJob> out = new ArrayList<>();
        for (int j = from + 1; j < entries.size(); j++) {
            RunningJob r = entries.get(j).running();
            if (r == null || evicted.contains(r.name()) || !overlaps(r, used)) {
                continue;
            }
            if (entries.get(j).level() <= level) {
                return null;
            }
            out.add(r);
        }
        return out;
    }

    private static boolean overlaps(RunningJob r, Map<String, Set<Integer>> used) {
        for (RunningTask t : r.tasks()) {
            Set<Integer> g = used.get(t.node());
            if (g != null && t.gpus().stream().anyMatch(g::contains)) {
                return true;
            }
        }
        return false;
    }

}
