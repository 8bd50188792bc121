package dev.gantry.placement.window;

import dev.gantry.contracts.jobs.JobQueued;
import dev.gantry.placement.engine.domain.PendingJob;
import dev.gantry.placement.engine.domain.Scenario;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.ToLongFunction;
import java.util.stream.Collectors;

/**
 * How long jobs run, for the window's reservations (plain Java, no I/O). A job's runtime is, in
 * this order: its own {@code estimatedRuntimeSeconds} (times {@code scale}: the standalone
 * executor runs a job for its estimate times its speed-up, so the reservation plans on the same
 * clock); else what jobs like it took (a high percentile of the recorded runtimes of the same
 * queue, owner and job name, else of the same queue and shape: {@link #jobKey}, {@link #shapeKey});
 * else {@code defaultRuntime}. A running job ends at its binding plus its runtime; one that has
 * overrun that is taken to end a little later ({@link #overrunMargin}: a tenth of its runtime, at
 * least a second), so no reservation ever starts in the past.
 */
public final class RuntimeEstimates {

    /** The percentile of past runtimes a job is expected to take: high, so a backfilled job rarely delays a reservation. */
    public static final double PERCENTILE = 0.9;

    private final double scale;
    private final long defaultSeconds;
    private final Map<String, Long> learned;

    /**
     * @param scale          runtime factor of a job's own estimate (the standalone speed-up; 1 on a real cluster)
     * @param defaultRuntime for a job with no estimate and no history
     * @param learned        {@link #jobKey} or {@link #shapeKey} -> runtime in seconds (the percentile of recorded runtimes)
     */
    public RuntimeEstimates(double scale, Duration defaultRuntime, Map<String, Long> learned) {
        this.scale = scale;
        this.defaultSeconds = Math.max(1, defaultRuntime.toSeconds());
        this.learned = Map.copyOf(learned);
    }

    /** The history key of a job by what it is: queue, owner and job name. */
    public static String jobKey(JobQueued spec) {
        return "job|" + spec.queue() + "|" + spec.owner() + "|" + spec.name();
    }

    /** The history key of a job by its shape in its queue: replicas x GPUs (or milli-GPUs) per task group. */
    public static String shapeKey(JobQueued spec) {
        return "shape|" + spec.queue() + "|" + spec.taskGroups().stream()
                .map(g -> g.replicas() + "x" + (g.gpuMilli() != null ? g.gpuMilli() + "m" : Integer.toString(g.gpusPerReplica())))
                .collect(Collectors.joining(","));
    }

    /** The {@code percentile} (0..1, nearest rank) of the runtimes; null for none. */
    public static Long percentile(List<Long> runtimes, double percentile) {
        if (runtimes.isEmpty()) {
            return null;
        }
        List<Long> sorted = new ArrayList<>(runtimes);
        sorted.sort(null);
        int rank = (int) Math.ceil(percentile * sorted.size());
        return sorted.get(Math.max(0, Math.min(sorted.size() - 1, rank - 1)));
    }

    /** The job's expected runtime in seconds (at least 1). */
    public long runtimeSeconds(JobQueued spec) {
        if (spec.estimatedRuntimeSeconds() != null) {
            return Math.max(1, (long) Math.ceil(spec.estimatedRuntimeSeconds() * scale));
        }
        Long seen = learned.get(jobKey(spec));
        if (seen == null) {
            seen = learned.get(shapeKey(spec));
        }
        return seen != null ? Math.max(1, seen) : defaultSeconds;
    }

    /** How much later than now a job that overran its estimate is taken to end: a tenth of its runtime, at least 1 s. */
    static long overrunMargin(long runtimeSeconds) {
        return Math.max(1, runtimeSeconds / 10);
    }

    /**
     * When a running job is expected to end (epoch seconds): bound at {@code boundAt}, plus its
     * runtime; a job that has overrun that ends {@link #overrunMargin} after {@code now}. A job
     * whose spec placement does not have (an allocation written by hand) never ends.
     */
    public long end(Instant boundAt, JobQueued spec, long nowSeconds) {
        if (spec == null || boundAt == null) {
            return Long.MAX_VALUE;
        }
        long runtime = runtimeSeconds(spec);
        long end = boundAt.getEpochSecond() + runtime;
        return end > nowSeconds ? end : nowSeconds + overrunMargin(runtime);
    }

    /** The estimated ends of the running jobs, by engine job name (the job id), for the engine's reservations. */
    public ToLongFunction<String> ends(List<ScenarioBuilder.Placed> placed, long nowSeconds) {
        Map<String, Long> ends = new HashMap<>();
        for (ScenarioBuilder.Placed p : placed) {
            ends.put(p.jobId().toString(), end(p.boundAt(), p.spec(), nowSeconds));
        }
        return job -> ends.getOrDefault(job, Long.MAX_VALUE);
    }

    /** The scenario with every pending job's runtime estimate filled in ({@link #runtimeSeconds}), for the reservations. */
    public Scenario withEstimates(Scenario sc, List<ScenarioBuilder.Waiting> waiting) {
        Map<String, JobQueued> specs = new HashMap<>();
        for (ScenarioBuilder.Waiting w : waiting) {
            specs.put(w.jobId().toString(), w.spec());
        }
        List<PendingJob> pending = sc.pending().stream().map(p -> {
            JobQueued spec = specs.get(p.name());
            return spec == null ? p : p.withEstimatedRuntimeSeconds(runtimeSeconds(spec));
        }).toList();
        return new Scenario(sc.format(), sc.name(), sc.nowSeconds(), sc.nodes(), sc.queues(), sc.running(), pending);
    }
}
