package dev.gantry.simulator.report;

import dev.gantry.simulator.replay.JobRecord;
import dev.gantry.simulator.replay.ReplayResult;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The figures of one policy's replay, with the lower bounds beside them: JCT ≥ duration;
 * makespan ≥ total GPU-time / capacity and ≥ the latest (submit + duration); queueing delay ≥ 0.
 * Slowdown is bounded (JCT / max(duration, 10 s)) so that seconds-long jobs do not dominate it.
 * Allocation is GPU-time held / (capacity × time), over the arrival span [first, last submission]
 * and over the whole makespan. Large jobs are those of {@value #LARGE_GPUS} GPUs or more (a whole
 * node or more): their delay is what moves and reservations are for; {@code moves} counts the jobs
 * moved while running.
 */
public record PolicyMetrics(
        String policy,
        int jobs,
        int finished,
        double delayMean, double delayP50, double delayP95, double delayP99, double delayMax,
        double jctMean, double jctMeanLowerBound,
        double slowdownMean,
        double makespan, double makespanLowerBound,
        double allocationDuringArrivals, double allocationOverall,
        double strandedGpusMean, double idleGpusWhileWaitingMean,
        int preemptions, int windows, int fallbacks, int fastPathWindows,
        int moves, int largeJobs, double largeDelayMean, double largeDelayP95,
        double solveMillisMean, double solveMillisP50, double solveMillisP95, double solveMillisMax,
        long wallMillis) {

    static final long SLOWDOWN_FLOOR_SECONDS = 10;
    static final double LARGE_GPUS = 8;

    public static PolicyMetrics of(ReplayResult r) {
        List<JobRecord> done = r.jobs().stream().filter(JobRecord::finished).toList();
        double[] delay = done.stream().mapToDouble(JobRecord::queueingDelay).toArray();
        double[] jct = done.stream().mapToDouble(JobRecord::jct).toArray();
        double[] dur = done.stream().mapToDouble(JobRecord::duration).toArray();
        double[] slow = done.stream().mapToDouble(j -> (double) j.jct() / Math.max(j.duration(), SLOWDOWN_FLOOR_SECONDS)).toArray();
        long first = r.jobs().stream().mapToLong(JobRecord::submit).min().orElse(0);
        long lastSubmit = r.jobs().stream().mapToLong(JobRecord::submit).max().orElse(0);
        long lastEnd = done.stream().mapToLong(JobRecord::end).max().orElse(first);
        double capacity = r.capacityMilli() / 1000.0;
        double gpuSeconds = r.jobs().stream().mapToDouble(j -> j.gpus() * j.duration()).sum();
        double latest = r.jobs().stream().mapToDouble(j -> j.submit() + j.duration()).max().orElse(first) - first;
        double makespanLb = Math.max(gpuSeconds / capacity, latest);
        double[] solve = Stats.ofLongs(r.solveMillis());
        double[] large = done.stream().filter(j -> j.gpus() >= LARGE_GPUS).mapToDouble(JobRecord::queueingDelay).toArray();
        return new PolicyMetrics(r.policy(), r.jobs().size(), done.size(),
                Stats.mean(delay), Stats.percentile(delay, 50), Stats.percentile(delay, 95), Stats.percentile(delay, 99),
                Arrays.stream(delay).max().orElse(0),
                Stats.mean(jct), Stats.mean(dur), Stats.mean(slow),
                lastEnd - first, makespanLb,
                heldFraction(r.segments(), first, lastSubmit, capacity), heldFraction(r.segments(), first, lastEnd, capacity),
                Stats.mean(Stats.ofInts(r.strandedGpus())), Stats.mean(Stats.ofInts(r.idleWhileWaiting())),
                r.preemptions(), r.solveMillis().size(), r.fallbacks(), r.fastPaths(),
                r.migrations(), large.length, Stats.mean(large), Stats.percentile(large, 95),
                Stats.mean(solve), Stats.percentile(solve, 50), Stats.percentile(solve, 95), Arrays.stream(solve).max().orElse(0),
                r.wallMillis());
    }

    /** GPU-time held inside [from, to) over capacity × (to - from). */
    static double heldFraction(List<long[]> segments, long from, long to, double capacity) {
        if (to <= from) {
            return 0;
        }
        double held = 0;
        for (long[] s : segments) {
            long a = Math.max(s[0], from);
            long b = Math.min(s[1], to);
            if (b > a) {
                held += (b - a) * (s[2] / 1000.0);
            }
        }
        return held / (capacity * (to - from));
    }

    /** GPUs held per time bucket (mean over the bucket), for the allocation-over-time chart. */
    public static double[] heldSeries(List<long[]> segments, long from, long bucketSeconds, int buckets) {
        double[] out = new double[buckets];
        for (long[] s : segments) {
            for (long b = Math.max(0, (s[0] - from) / bucketSeconds); b < buckets; b++) {
                long a = Math.max(s[0], from + b * bucketSeconds);
                long e = Math.min(s[1], from + (b + 1) * bucketSeconds);
                if (e <= a) {
                    if (from + b * bucketSeconds >= s[1]) {
                        break;
                    }
                    continue;
                }
                out[(int) b] += (e - a) * (s[2] / 1000.0) / bucketSeconds;
            }
        }
        return out;
    }

    public Map<String, Object> toMap() {
        Map<String, Object> m = new LinkedHashMap<>();
        for (var c : PolicyMetrics.class.getRecordComponents()) {
            try {
                m.put(c.getName(), c.getAccessor().invoke(this));
            } catch (ReflectiveOperationException e) {
                throw new IllegalStateException(e);
            }
        }
        return m;
    }
}
