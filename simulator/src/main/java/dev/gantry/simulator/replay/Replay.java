package dev.gantry.simulator.replay;

import dev.gantry.placement.engine.domain.Node;
import dev.gantry.placement.engine.domain.PendingJob;
import dev.gantry.placement.engine.packing.WorkloadMix;
import dev.gantry.placement.engine.domain.Placement;
import dev.gantry.placement.engine.domain.Plan;
import dev.gantry.placement.engine.domain.Preemption;
import dev.gantry.placement.engine.domain.Queue;
import dev.gantry.placement.engine.domain.RunningJob;
import dev.gantry.placement.engine.domain.RunningTask;
import dev.gantry.placement.engine.domain.Scenario;
import dev.gantry.placement.engine.domain.TaskGroup;
import dev.gantry.placement.engine.domain.TaskPlacement;
import dev.gantry.placement.engine.forecast.StartForecast;
import dev.gantry.placement.engine.planner.MovesThatMakeRoom;
import dev.gantry.placement.engine.planner.Planner;
import dev.gantry.placement.engine.validation.PlanValidator;
import dev.gantry.simulator.cluster.ClusterFile;
import dev.gantry.simulator.policy.LasPlanner;
import dev.gantry.simulator.policy.Policies;
import dev.gantry.simulator.trace.TraceJob;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.Set;

/**
 * Discrete-event replay of a job trace against one policy. Arrivals and completions happen at
 * their own times; the scheduler runs at window boundaries (multiples of the window length)
 * when something arrived, ended or was preempted since its last run and jobs wait. Each run
 * freezes the cluster into a {@link Scenario} and asks the policy's {@link Planner} (the
 * engine's, as the service does); placed jobs start at the boundary and end after their
 * duration. Windows in which nothing changed are skipped: the planners are deterministic
 * functions of their input apart from the solver's aging term, so re-asking would mostly
 * return the same answer (said in the README).
 */
public final class Replay {
    private final ClusterFile cluster;
    private final List<TraceJob> jobs;
    private final ReplayOptions options;
    private final List<Queue> queues;

    /** A job while it is simulated. */
    private static final class Live {
        final TraceJob job;
        long remaining;
        long firstStart = -1;
        long startedAt = -1;
        /** GPU-seconds received in finished or preempted stretches. */
        long attained;
        long end = -1;
        int preemptions;
        /** When it was last moved (-1: never): the placement service's minimum time between two moves. */
        long lastMoved = -1;
        List<RunningTask> tasks = List.of();
        /** Start-time forecasts ({@link ForecastSample}): when made (MIN_VALUE: not yet), what (-1: unknown). */
        long atSubmissionMadeAt = Long.MIN_VALUE;
        long atSubmission = -1;
        boolean placedInFirstWindow;
        long atHourMadeAt = Long.MIN_VALUE;
        long atHour = -1;

        Live(TraceJob job) {
            this.job = job;
            this.remaining = job.durationSeconds();
        }
    }

    public Replay(ClusterFile cluster, List<TraceJob> jobs, ReplayOptions options) {
        this.cluster = cluster;
        this.jobs = jobs.stream().sorted(Comparator.comparingLong(TraceJob::submitSeconds).thenComparing(TraceJob::name)).toList();
        this.options = options;
        Map<String, Queue> qs = new LinkedHashMap<>();
        cluster.queues().forEach(q -> qs.put(q.name(), q));
        // one queue per name the trace uses (a Philly VC): equal weight, no guarantee, no cap
        this.jobs.forEach(j -> qs.computeIfAbsent(j.queue(), n -> new Queue(n, 1, 0, null, true, null)));
        this.queues = List.copyOf(qs.values());
    }

    public ReplayResult run(String policy, Progress progress) {
        long wallStart = System.nanoTime();
        Map<String, Live> runningByName = new HashMap<>();
        Map<String, Long> endByName = new HashMap<>();
        WorkloadMix arrivals = new WorkloadMix();
        // the replay knows every running job's end exactly: the runtime estimates are perfect
        Planner planner = Policies.create(policy, name -> endByName.getOrDefault(name, Long.MAX_VALUE), options.fastPath(),
                options.reservation(), arrivals, options.solverMoves(), options.reservations());
        // las: the priority a planner sees is set from the service each job has received (Tiresias)
        boolean las = planner instanceof LasPlanner;
        Map<String, Live> pending = new LinkedHashMap<>();
        PriorityQueue<Live> completions = new PriorityQueue<>(Comparator.comparingLong((Live l) -> l.end).thenComparing(l -> l.job.name()));
        List<Live> all = new ArrayList<>();
        List<long[]> segments = new ArrayList<>();
        List<Long> solveMillis = new ArrayList<>();
        List<Integer> stranded = new ArrayList<>();
        List<Integer> idleWaiting = new ArrayList<>();
        int preemptions = 0;
        int migrations = 0;
        int fallbacks = 0;
        int fastPaths = 0;
        long w = options.windowSeconds();
        int next = 0;
        long first = jobs.isEmpty() ? 0 : jobs.getFirst().submitSeconds();
        long lastSubmit = jobs.isEmpty() ? 0 : jobs.getLast().submitSeconds();
        Map<String, Integer> nodeIndex = new HashMap<>();
        for (int i = 0; i < cluster.nodes().size(); i++) {
            nodeIndex.put(cluster.nodes().get(i).name(), i);
        }
        int windowNo = 0;
        while (next < jobs.size() || !completions.isEmpty()) {
            long nextEvent = Long.MAX_VALUE;
            if (next < jobs.size()) {
                nextEvent = jobs.get(next).submitSeconds();
            }
            if (!completions.isEmpty()) {
                nextEvent = Math.min(nextEvent, completions.peek().end);
            }
            long tick = Math.ceilDiv(nextEvent, w) * w;
            boolean changed = false;
            while (!completions.isEmpty() && completions.peek().end <= tick) {
                Live l = completions.poll();
                segments.add(new long[] {l.startedAt, l.end, l.job.gpuMilli()});
                runningByName.remove(l.job.name());
                endByName.remove(l.job.name());
                changed = true;
            }
            while (next < jobs.size() && jobs.get(next).submitSeconds() <= tick) {
                Live l = new Live(jobs.get(next++));
                arrivals.record(l.job.pending(l.remaining, options.preemptible()));
                all.add(l);
                pending.put(l.job.name(), l);
                changed = true;
            }
            if (!changed || pending.isEmpty()) {
                continue;
            }
            Scenario sc = scenario("w" + windowNo++, tick, runningByName.values(), pending.values(), las);
            long t0 = System.nanoTime();
            Plan plan = planner.plan(sc, options.profile());
            if (options.migratableFraction() > 0) {
                // as the placement service: a move stops a job, so only moves that make room for this plan's placements happen
                plan = MovesThatMakeRoom.keep(sc, plan);
            }
            solveMillis.add((System.nanoTime() - t0) / 1_000_000);
            if (plan.metadata().containsKey("fallback")) {
                fallbacks++;
            }
            if (plan.metadata().containsKey("fastPath")) {
                fastPaths++;
            }
            if (options.validate()) {
                List<String> violations = PlanValidator.validate(sc, plan);
                if (!violations.isEmpty()) {
                    throw new IllegalStateException(policy + " made an invalid plan at t=" + tick + ": " + violations.getFirst());
                }
            }
            for (Preemption p : plan.preemptions()) {
                Live l = runningByName.remove(p.job());
                completions.remove(l);
                endByName.remove(p.job());
                segments.add(new long[] {l.startedAt, tick, l.job.gpuMilli()});
                l.attained += (tick - l.startedAt) * l.job.gpuMilli() / 1000;
                l.remaining = Math.max(1, l.end - tick); // checkpointed: the work done is kept
                l.end = -1;
                l.preemptions++;
                preemptions++;
                pending.put(l.job.name(), l);
            }
            for (var m : plan.migrations()) {
                Live l = runningByName.get(m.job());
                l.tasks = tasks(l.job, m.tasks());
                // checkpoint, stop, restart elsewhere: the job holds GPUs that long without progress
                completions.remove(l);
                l.end += options.moveCostSeconds();
                completions.add(l);
                endByName.put(l.job.name(), l.end);
                l.lastMoved = tick;
                migrations++;
            }
            for (Placement p : plan.placements()) {
                Live l = pending.remove(p.job());
                l.startedAt = tick;
                if (l.firstStart < 0) {
                    l.firstStart = tick;
                }
                l.end = tick + l.remaining;
                l.tasks = tasks(l.job, p.tasks());
                runningByName.put(l.job.name(), l);
                endByName.put(l.job.name(), l.end);
                completions.add(l);
            }
            if (options.forecaster() != null) {
                forecast(sc, plan, tick, pending.values(), runningByName, endByName);
            }
            sample(runningByName.values(), nodeIndex, pending.isEmpty(), stranded, idleWaiting);
            double frac = jobs.isEmpty() ? 1 : Math.min(1.0, (double) (tick - first) / Math.max(1, lastSubmit - first));
            progress.update(frac, policy + " t+" + (tick - first) / 3600 + "h run " + runningByName.size() + " wait " + pending.size());
        }
        List<JobRecord> records = all.stream()
                .map(l -> new JobRecord(l.job.name(), l.job.queue(), l.job.gpuMilli() / 1000.0, l.job.submitSeconds(), l.job.durationSeconds(),
                        l.firstStart, l.end, l.preemptions))
                .toList();
        List<ForecastSample> forecasts = new ArrayList<>();
        if (options.forecaster() != null) {
            for (Live l : all) {
                if (l.atSubmissionMadeAt != Long.MIN_VALUE) {
                    forecasts.add(new ForecastSample(l.job.name(), "submission", l.atSubmissionMadeAt, l.atSubmission, l.firstStart,
                            l.placedInFirstWindow));
                }
                if (l.atHourMadeAt != Long.MIN_VALUE) {
                    forecasts.add(new ForecastSample(l.job.name(), "1h", l.atHourMadeAt, l.atHour, l.firstStart, false));
                }
            }
        }
        return new ReplayResult(policy, cluster.gpuMilli(), records, segments, solveMillis, stranded, idleWaiting, preemptions, fallbacks, fastPaths,
                (System.nanoTime() - wallStart) / 1_000_000, migrations, forecasts);
    }

    /**
     * After a window's plan is applied: the forecast start of each job it left waiting that has none
     * yet ("at submission"), and of each still waiting an hour or more after its submission that has
     * no such forecast yet; a job first seen in this window and placed by it gets its start as its
     * forecast. The replay knows every end exactly, as the estimates the forecaster is given.
     */
    private void forecast(Scenario sc, Plan plan, long tick, Collection<Live> waiting, Map<String, Live> runningByName,
            Map<String, Long> endByName) {
        for (Placement p : plan.placements()) {
            Live l = runningByName.get(p.job());
            if (l != null && l.atSubmissionMadeAt == Long.MIN_VALUE) {
                l.atSubmissionMadeAt = tick;
                l.atSubmission = tick;
                l.placedInFirstWindow = true;
            }
        }
        Set<String> wanted = new HashSet<>();
        for (Live l : waiting) {
            if (l.atSubmissionMadeAt == Long.MIN_VALUE || l.atHourMadeAt == Long.MIN_VALUE && tick >= l.job.submitSeconds() + 3600) {
                wanted.add(l.job.name());
            }
        }
        if (wanted.isEmpty()) {
            return;
        }
        Map<String, StartForecast> f = options.forecaster().forecast(sc, plan, name -> endByName.getOrDefault(name, Long.MAX_VALUE), wanted);
        for (Live l : waiting) {
            if (!wanted.contains(l.job.name())) {
                continue;
            }
            StartForecast one = f.get(l.job.name());
            long predicted = one == null || one.startSeconds() == null ? -1 : one.startSeconds();
            if (l.atSubmissionMadeAt == Long.MIN_VALUE) {
                l.atSubmissionMadeAt = tick;
                l.atSubmission = predicted;
            } else {
                l.atHourMadeAt = tick;
                l.atHour = predicted;
            }
        }
    }

    private Scenario scenario(String name, long now, Iterable<Live> running, Iterable<Live> waiting, boolean las) {
        List<RunningJob> run = new ArrayList<>();
        for (Live l : running) {
            long service = l.attained + (now - l.startedAt) * l.job.gpuMilli() / 1000;
            int priority = las ? LasPlanner.servicePriority(l.job.priority(), service) : l.job.priority();
            boolean movable = movable(l, now);
            run.add(new RunningJob(l.job.name(), l.job.queue(), priority, options.preemptible(), options.preemptible() || movable, movable,
                    l.startedAt, l.tasks));
        }
        List<PendingJob> pend = new ArrayList<>();
        for (Live l : waiting) {
            PendingJob p = l.job.pending(l.remaining, options.preemptible());
            if (las) {
                p = new PendingJob(p.name(), p.queue(), LasPlanner.servicePriority(p.priority(), l.attained), p.submittedAtSeconds(),
                        p.taskGroups(), p.minAvailable(), p.gpuModels(), p.gpuTopology(), p.network(), p.requireInfiniBand(),
                        p.nodeSelector(), p.tolerations(), p.preemptible(), p.checkpointable(), p.estimatedRuntimeSeconds());
            }
            pend.add(p);
        }
        return new Scenario(Scenario.FORMAT, name, now, cluster.nodes(), queues, run, pend);
    }

    /**
     * Whether the job may be moved now: one of the migratable fraction (by a hash of its name), not
     * in its first 10 minutes after a placement and not moved within the hour (the service's
     * default disruption budget per job).
     */
    private boolean movable(Live l, long now) {
        if (options.migratableFraction() <= 0) {
            return false;
        }
        double draw = (l.job.name().hashCode() & 0x7fffffff) / (double) Integer.MAX_VALUE;
        return draw < options.migratableFraction() && now - l.startedAt >= 600 && (l.lastMoved < 0 || now - l.lastMoved >= 3600);
    }

    /** A placement's tasks as running tasks, with the CPU and memory of their task group. */
    private static List<RunningTask> tasks(TraceJob job, List<TaskPlacement> placed) {
        Map<String, TaskGroup> groups = new HashMap<>();
        job.taskGroups().forEach(g -> groups.put(g.name(), g));
        List<RunningTask> out = new ArrayList<>();
        for (TaskPlacement t : placed) {
            TaskGroup g = groups.get(t.task().substring(0, t.task().lastIndexOf('-')));
            out.add(new RunningTask(t.task(), t.node(), t.gpus(), g.cpuMillis(), g.memoryMiB(), t.gpuMilli()));
        }
        return out;
    }

    /** Stranded GPUs (free on partly used nodes) and, when jobs still wait, every free GPU. */
    private void sample(Iterable<Live> running, Map<String, Integer> nodeIndex, boolean nobodyWaits, List<Integer> stranded,
            List<Integer> idleWaiting) {
        int[] used = new int[cluster.nodes().size()];
        for (Live l : running) {
            for (RunningTask t : l.tasks) {
                used[nodeIndex.get(t.node())] += t.gpus().size();
            }
        }
        int str = 0;
        int free = 0;
        for (int i = 0; i < used.length; i++) {
            Node n = cluster.nodes().get(i);
            int f = Math.max(0, n.gpus() - used[i]);
            free += f;
            if (used[i] > 0) {
                str += f;
            }
        }
        stranded.add(str);
        if (!nobodyWaits) {
            idleWaiting.add(free);
        }
    }
}
