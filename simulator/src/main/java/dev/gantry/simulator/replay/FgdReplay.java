package dev.gantry.simulator.replay;

import dev.gantry.placement.engine.domain.Migration;
import dev.gantry.placement.engine.domain.Network;
import dev.gantry.placement.engine.domain.PendingJob;
import dev.gantry.placement.engine.domain.Placement;
import dev.gantry.placement.engine.domain.Plan;
import dev.gantry.placement.engine.domain.Queue;
import dev.gantry.placement.engine.domain.RunningJob;
import dev.gantry.placement.engine.domain.RunningTask;
import dev.gantry.placement.engine.domain.Scenario;
import dev.gantry.placement.engine.domain.TaskGroup;
import dev.gantry.placement.engine.domain.TaskPlacement;
import dev.gantry.placement.engine.packing.WorkloadMix;
import dev.gantry.placement.engine.planner.Planner;
import dev.gantry.placement.engine.planner.SolverProfile;
import dev.gantry.placement.engine.validation.PlanValidator;
import dev.gantry.simulator.cluster.ClusterFile;
import dev.gantry.simulator.policy.Policies;
import dev.gantry.simulator.trace.OpenbTrace;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * The FGD paper's protocol (Weng et al., ATC'23) on OpenB: pods arrive one after another in a
 * seeded shuffled order, nothing departs, and arrivals go on until 130% of the cluster's GPU
 * capacity has been requested (the trace is drawn from again, with replacement, once it is used
 * up, like the paper's "tune 1.3" inflation). A pod that is not placed when it arrives fails.
 * The figure is the GPU allocation rate (GPU-milli placed / capacity) at each arrived percentage.
 *
 * <p>Windows: {@code batch = 1} is the paper's strictly online setting (one pod per scheduling
 * decision, nothing moves). {@code batch > 1} lets the planner see that many arrivals at once
 * (and, with {@code migrate}, move pods already placed). Both use the engine's planners.
 */
public final class FgdReplay {
    public static final double ARRIVE_UNTIL = 1.30;
    private static final Queue QUEUE = new Queue("openb", 1, 0, null, true, null);

    private final ClusterFile cluster;
    private final List<OpenbTrace.Pod> pods;
    private final SolverProfile profile;
    private final boolean validate;
    private final boolean migrate;
    private final boolean fastPath;

    /** Allocation % at each arrived % 0..130, and how the run went. */
    public record Curve(String policy, String mode, long seed, double[] allocation, int arrivedPods, int failedPods, int windows,
            double solveMillisMean, long wallMillis) {
        public double at(int arrivedPercent) {
            return allocation[arrivedPercent];
        }
    }

    public FgdReplay(ClusterFile cluster, List<OpenbTrace.Pod> pods, SolverProfile profile, boolean validate, boolean migrate) {
        this(cluster, pods, profile, validate, migrate, false);
    }

    /**
     * @param fastPath timefold skips the solver in windows where its fragmentation-aware seed
     *     places every arrival, as the service's fast path does for a job that fits (see
     *     {@link dev.gantry.simulator.policy.FastPathPlanner})
     */
    public FgdReplay(ClusterFile cluster, List<OpenbTrace.Pod> pods, SolverProfile profile, boolean validate, boolean migrate,
            boolean fastPath) {
        this.fastPath = fastPath;
        this.cluster = cluster;
        this.pods = pods;
        this.profile = profile;
        this.validate = validate;
        this.migrate = migrate;
    }

    /** The arrival sequence of a seed: a shuffle of the trace, then draws with replacement up to 130%. */
    public List<OpenbTrace.Pod> arrivals(long seed) {
        Random rnd = new Random(seed);
        List<OpenbTrace.Pod> order = new ArrayList<>(pods);
        Collections.shuffle(order, rnd);
        long capacity = cluster.gpuMilli();
        long target = (long) Math.ceil(ARRIVE_UNTIL * capacity);
        long sum = 0;
        List<OpenbTrace.Pod> out = new ArrayList<>();
        for (int i = 0; sum < target; i++) {
            OpenbTrace.Pod p = i < order.size() ? order.get(i) : pods.get(rnd.nextInt(pods.size()));
            out.add(p);
            sum += p.demandMilli();
            if (i > 10 * order.size() + 1_000_000) {
                throw new IllegalArgumentException("the trace requests no GPUs: it can never reach 130% of capacity");
            }
        }
        return out;
    }

    public Curve run(String policy, int batch, String mode, long seed, Progress progress) {
        long wallStart = System.nanoTime();
        WorkloadMix arrivals = new WorkloadMix();
        // nothing departs: no end is known
        Planner planner = Policies.create(policy, null, fastPath, arrivals); // nothing departs: no estimated ends
        List<OpenbTrace.Pod> seq = arrivals(seed);
        long capacity = cluster.gpuMilli();
        Map<String, RunningJob> running = new LinkedHashMap<>();
        long arrived = 0;
        long allocated = 0;
        int failed = 0;
        int windows = 0;
        long solveNanos = 0;
        // samples: arrived milli -> allocated milli after the window that brought it
        List<long[]> samples = new ArrayList<>();
        samples.add(new long[] {0, 0});
        for (int start = 0; start < seq.size(); start += batch) {
            List<PendingJob> pending = new ArrayList<>();
            Map<String, OpenbTrace.Pod> byName = new HashMap<>();
            for (int i = start; i < Math.min(seq.size(), start + batch); i++) {
                OpenbTrace.Pod p = seq.get(i);
                String name = "a" + i + "-" + p.name(); // a pod drawn twice arrives as two pods
                byName.put(name, p);
                PendingJob job = pendingOf(name, p, i);
                arrivals.record(job);
                pending.add(job);
                arrived += p.demandMilli();
            }
            Scenario sc = new Scenario(Scenario.FORMAT, "openb-" + seed + "-" + start, start, cluster.nodes(), List.of(QUEUE),
                    List.copyOf(running.values()), pending);
            long t0 = System.nanoTime();
            Plan plan = planner.plan(sc, profile);
            solveNanos += System.nanoTime() - t0;
            windows++;
            if (validate) {
                List<String> v = PlanValidator.validate(sc, plan);
                if (!v.isEmpty()) {
                    throw new IllegalStateException(policy + " made an invalid plan in window " + start + ": " + v.getFirst());
                }
            }
            for (Migration m : plan.migrations()) {
                RunningJob r = running.get(m.job());
                running.put(m.job(), new RunningJob(r.name(), r.queue(), r.priority(), false, false, r.migratable(), r.startedAtSeconds(),
                        moved(r, m.tasks())));
            }
            if (!plan.preemptions().isEmpty()) {
                throw new IllegalStateException("preemption in the FGD protocol: running pods are not preemptible");
            }
            for (Placement pl : plan.placements()) {
                OpenbTrace.Pod p = byName.get(pl.job());
                List<RunningTask> tasks = new ArrayList<>();
                for (TaskPlacement t : pl.tasks()) {
                    tasks.add(new RunningTask(t.task(), t.node(), t.gpus(), p.cpuMillis(), p.memoryMiB(), t.gpuMilli()));
                }
                running.put(pl.job(), new RunningJob(pl.job(), QUEUE.name(), 0, false, false, migrate, start, tasks));
                allocated += p.demandMilli();
            }
            failed += plan.unplaced().size();
            samples.add(new long[] {arrived, allocated});
            progress.update((double) arrived / (ARRIVE_UNTIL * capacity), policy + " " + mode + " seed " + seed + " arrived "
                    + Math.round(100.0 * arrived / capacity) + "% alloc " + Math.round(100.0 * allocated / capacity) + "%");
        }
        double[] curve = new double[131];
        int s = 0;
        for (int pct = 0; pct <= 130; pct++) {
            // allocation once the arrived workload first reaches pct% (monotone: nothing departs)
            while (s < samples.size() - 1 && samples.get(s)[0] * 100 < (long) pct * capacity) {
                s++;
            }
            curve[pct] = 100.0 * samples.get(s)[1] / capacity;
        }
        return new Curve(policy, mode, seed, curve, seq.size(), failed, windows, solveNanos / 1e6 / Math.max(1, windows),
                (System.nanoTime() - wallStart) / 1_000_000);
    }

    private static PendingJob pendingOf(String name, OpenbTrace.Pod p, long submitted) {
        TaskGroup g = p.gpus() == 1 && p.gpuMilli() < 1000
                ? new TaskGroup("pod", 1, 1, p.cpuMillis(), p.memoryMiB(), p.gpuMilli())
                : new TaskGroup("pod", 1, p.gpus(), p.cpuMillis(), p.memoryMiB(), null);
        return new PendingJob(name, QUEUE.name(), 0, submitted, List.of(g), 1, p.gpuSpec(), null, Network.ANY, false, null, null, false, false, null);
    }

    private static List<RunningTask> moved(RunningJob r, List<TaskPlacement> to) {
        Map<String, RunningTask> old = new HashMap<>();
        r.tasks().forEach(t -> old.put(t.name(), t));
        return to.stream().map(t -> new RunningTask(t.task(), t.node(), t.gpus(), old.get(t.task()).cpuMillis(), old.get(t.task()).memoryMiB(),
                t.gpuMilli())).toList();
    }
}
