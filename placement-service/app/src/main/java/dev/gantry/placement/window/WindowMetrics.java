package dev.gantry.placement.window;

import dev.gantry.placement.engine.domain.Plan;
import dev.gantry.placement.engine.validation.PlanMetrics;
import dev.gantry.placement.persistence.RunningJobRecord;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.MultiGauge;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.quarkus.hibernate.reactive.panache.Panache;
import io.quarkus.runtime.Startup;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Set;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What the scheduling windows export to Prometheus ({@code gantry_placement_*}): window and solve
 * time (and overruns of the profile's limit + 20%), the last plan's score per level, jobs placed,
 * preempted and migrated, GPUs allocated by queue and model and per GPU (to join with DCGM's
 * utilisation), fragmentation after the plan, pending jobs and the oldest wait per queue, and the
 * queue wait from submission to bound. The alerts and dashboard in {@code deploy/k8s/monitoring}
 * name these.
 */
@ApplicationScoped
@Startup // the meters exist from the start, before the first window, so scrapes and alerts always find them
public class WindowMetrics {

    private static final Pattern SCORE_LEVEL = Pattern.compile("(-?\\d+)(hard|medium|soft)");

    private final Timer window;
    private final Timer solve;
    private final Timer fastPath;
    private final MeterRegistry registry;
    private final Counter overruns;
    private final Counter rejected;
    private final Counter fallbacks;
    private final Counter burstsWithoutSolve;
    private final Counter placed;
    private final Counter preempted;
    private final Counter migrated;
    private final DistributionSummary queueWait;
    private final MultiGauge gpusByQueueAndModel;
    /** One gauge (always 1) per allocated GPU; kept from window to window and changed only where allocations changed. */
    private final Map<HeldGpu, Gauge> gpuAllocated = new HashMap<>();
    private final MultiGauge pendingByQueue;
    private final MultiGauge oldestPendingByQueue;
    private final Map<String, AtomicLong> score = new HashMap<>();
    private final AtomicLong strandedGpus = new AtomicLong();
    private final AtomicLong wholeFreeNodes = new AtomicLong();
    private volatile long limitNanos = Duration.ofMillis(200).toNanos();

    public WindowMetrics(MeterRegistry registry) {
        this.registry = registry;
        this.window = Timer.builder("gantry.placement.window").description("one scheduling window: read, plan, validate, bind")
                .register(registry);
        this.solve = Timer.builder("gantry.placement.solve").description("the planner's solve inside a window").register(registry);
        this.fastPath = Timer.builder("gantry.placement.fastpath").description("from a job's event to its fast-path binding")
                .publishPercentiles(0.5, 0.99).register(registry);
        this.overruns = Counter.builder("gantry.placement.window.overruns")
                .description("windows that took longer than the solver profile's limit plus 20%").register(registry);
        this.rejected = Counter.builder("gantry.placement.plans.rejected")
                .description("plans the validator refused (not applied)").register(registry);
        this.fallbacks = Counter.builder("gantry.placement.solver.fallbacks")
                .description("windows whose solver left the greedy plan as it was (no time left for it, or nothing better found in time)")
                .register(registry);
        this.burstsWithoutSolve = Counter.builder("gantry.placement.bursts.greedy")
                .description("windows for a burst of arrivals that all fitted as things were: bound from the fast path's greedy plan, no solve")
                .register(registry);
        this.placed = Counter.builder("gantry.placement.jobs.placed").description("jobs bound").register(registry);
        this.preempted = Counter.builder("gantry.placement.jobs.preempted").description("jobs preempted by a plan").register(registry);
        this.migrated = Counter.builder("gantry.placement.jobs.migrated")
                .description("moves of running jobs carried out (relaunched on their new GPUs), not moves planned").register(registry);
        this.queueWait = DistributionSummary.builder("gantry.placement.queue.wait").baseUnit("seconds")
                .description("from submission to bound").publishPercentileHistogram()
                .minimumExpectedValue(1.0).maximumExpectedValue((double) Duration.ofDays(7).toSeconds()).register(registry);
        this.gpusByQueueAndModel = MultiGauge.builder("gantry.placement.gpus.allocated")
                .description("GPUs held by running jobs, by queue and GPU model").register(registry);
        this.pendingByQueue = MultiGauge.builder("gantry.placement.pending.jobs").description("jobs waiting, by queue")
                .register(registry);
        this.oldestPendingByQueue = MultiGauge.builder("gantry.placement.oldest.pending").baseUnit("seconds")
                .description("how long the oldest waiting job of each queue has waited").register(registry);
        for (String level : List.of("hard", "medium", "soft")) {
            AtomicLong value = new AtomicLong();
            score.put(level, value);
            Gauge.builder("gantry.placement.score", value, AtomicLong::get).tag("level", level)
                    .description("the last window's plan score, per level").register(registry);
        }
        Gauge.builder("gantry.placement.stranded.gpus", strandedGpus, AtomicLong::get)
                .description("free GPUs on partly used nodes after the last plan").register(registry);
        Gauge.builder("gantry.placement.whole.free.nodes", wholeFreeNodes, AtomicLong::get)
                .description("nodes with every GPU free after the last plan").register(registry);
        Gauge.builder("gantry.placement.window.limit", this, m -> m.limitNanos / 1e9).baseUnit("seconds")
                .description("the solver profile's time limit per window").register(registry);
    }

    void limit(Duration profileLimit) {
        this.limitNanos = profileLimit.toNanos();
    }

    /** Gauges that describe the state a window read: allocations and the waiting line. */
    void observeState(Instant now, WindowLoop.State state) {
        Map<String, String> modelByNode = new HashMap<>();
        state.nodes().forEach(n -> modelByNode.put(n.name(), n.gpuModel()));
        Map<UUID, String> queueByJob = new HashMap<>();
        state.placed().forEach(p -> queueByJob.put(p.jobId(), p.queue()));
        Map<Tags, Long> byQueueAndModel = new HashMap<>();
        Set<HeldGpu> heldGpus = new HashSet<>();
        for (ScenarioBuilder.Held held : state.held()) {
            String queue = queueByJob.getOrDefault(held.jobId(), "unknown");
            String model = modelByNode.getOrDefault(held.node(), "unknown");
            byQueueAndModel.merge(Tags.of("queue", queue, "model", model == null ? "none" : model), (long) held.gpus().size(), Long::sum);
            for (int gpu : held.gpus()) {
                heldGpus.add(new HeldGpu(held.node(), gpu, queue));
            }
        }
        gpusByQueueAndModel.register(byQueueAndModel.entrySet().stream()
                .map(e -> MultiGauge.Row.of(e.getKey(), e.getValue())).toList(), true);
        updateGpuAllocated(heldGpus);

        Map<String, Long> pending = new TreeMap<>();
        Map<String, Double> oldest = new TreeMap<>();
        for (ScenarioBuilder.Waiting w : state.waiting()) {
            String queue = w.spec().queue();
            pending.merge(queue, 1L, Long::sum);
            if (w.spec().submittedAt() != null) {
                double waited = Math.max(0, Duration.between(w.spec().submittedAt(), now).toMillis() / 1000.0);
                oldest.merge(queue, waited, Math::max);
            }
        }
        pendingByQueue.register(pending.entrySet().stream()
                .map(e -> MultiGauge.Row.of(Tags.of("queue", e.getKey()), e.getValue())).toList(), true);
        oldestPendingByQueue.register(oldest.entrySet().stream()
                .map(e -> MultiGauge.Row.of(Tags.of("queue", e.getKey()), e.getValue())).toList(), true);
    }

    /**
     * One step of a window ({@code read}, {@code gauges}, {@code plan}, {@code bind}, {@code reasons}):
     * where a window's time goes when it runs over its limit.
     */
    void observePhase(String phase, long nanos) {
        Timer.builder("gantry.placement.window.phase").description("one step of a scheduling window").tag("phase", phase)
                .register(registry).record(nanos, TimeUnit.NANOSECONDS);
    }

    /** A GPU a queue holds: one {@code gantry_placement_gpu_allocated} series. */
    private record HeldGpu(String node, int gpu, String queue) {
    }

    /**
     * Removes the series of GPUs no longer held and adds those of newly held ones. Re-registering
     * every GPU of a large cluster each window took longer than reading the state.
     */
    private void updateGpuAllocated(Set<HeldGpu> held) {
        gpuAllocated.entrySet().removeIf(e -> {
            if (held.contains(e.getKey())) {
                return false;
            }
            registry.remove(e.getValue());
            return true;
        });
        for (HeldGpu gpu : held) {
            gpuAllocated.computeIfAbsent(gpu, g -> Gauge.builder("gantry.placement.gpu.allocated", () -> 1)
                    .description("1 for each allocated GPU (node, index), labelled with the queue holding it")
                    .tags("node", g.node(), "gpu", Integer.toString(g.gpu()), "queue", g.queue()).register(registry));
        }
    }

    void observeSolve(long nanos) {
        solve.record(nanos, TimeUnit.NANOSECONDS);
    }

    /** A burst's window took the fast path's greedy plan (everyone fitted) instead of solving. */
    void burstPlacedWithoutSolve() {
        burstsWithoutSolve.increment();
    }

    void planRejected() {
        rejected.increment();
    }

    /** A move finished: the job holds its new GPUs (counted when done, not when planned). */
    void observeMigrated() {
        migrated.increment();
    }

    /**
     * A window that planned: its time (an overrun when over the limit + 20%); with a plan, its
     * score, fragmentation and counts. True when it overran.
     */
    boolean observeWindow(WindowLoop.Decision decision, long nanos) {
        window.record(nanos, TimeUnit.NANOSECONDS);
        boolean overran = nanos > limitNanos * 1.2;
        if (overran) {
            overruns.increment();
        }
        Plan plan = decision.plan();
        if (plan == null) {
            return overran;
        }
        if (plan.metadata().containsKey("fallback")) {
            fallbacks.increment();
        }
        preempted.increment(plan.preemptions().size());
        String text = plan.metadata().get("score");
        if (text != null) {
            Matcher m = SCORE_LEVEL.matcher(text);
            while (m.find()) {
                score.get(m.group(2)).set(Long.parseLong(m.group(1)));
            }
        }
        PlanMetrics figures = PlanMetrics.of(decision.scenario(), plan);
        strandedGpus.set(Math.round(figures.strandedGpus()));
        wholeFreeNodes.set(figures.freeWholeNodes());
        return overran;
    }

    void observeFastPath(long nanos) {
        fastPath.record(nanos, TimeUnit.NANOSECONDS);
    }

    /** Jobs of {@code plan} that are now bound: counted, and their wait from submission recorded. */
    Uni<Void> observeBound(Plan plan) {
        List<UUID> ids = plan.placements().stream().map(p -> UUID.fromString(p.job())).toList();
        if (ids.isEmpty()) {
            return Uni.createFrom().voidItem();
        }
        return Panache.withSession(() -> RunningJobRecord.<RunningJobRecord>list("jobId in ?1", ids)).invoke(rows -> {
            for (RunningJobRecord row : rows) {
                if (row.boundAt != null && row.submittedAt != null && !row.boundAt.isBefore(row.submittedAt)) {
                    queueWait.record(Duration.between(row.submittedAt, row.boundAt).toMillis() / 1000.0);
                    placed.increment();
                }
            }
        }).replaceWithVoid();
    }

}
