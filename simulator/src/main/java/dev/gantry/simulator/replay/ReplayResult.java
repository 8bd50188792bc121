package dev.gantry.simulator.replay;

import java.util.List;

/**
 * A finished replay of one policy.
 *
 * @param segments       every stretch a job held GPUs: {start, end, gpuMilli}
 * @param solveMillis    wall time of each planner call
 * @param strandedGpus   per window after planning: free whole GPUs on partly used nodes
 * @param fastPaths      windows where timefold's solver was skipped (greedy placed everything)
 * @param idleWhileWaiting per window after planning, when jobs still wait: free GPUs
 * @param forecasts      start-time forecasts set against the actual starts (empty without a forecaster)
 */
public record ReplayResult(
        String policy,
        long capacityMilli,
        List<JobRecord> jobs,
        List<long[]> segments,
        List<Long> solveMillis,
        List<Integer> strandedGpus,
        List<Integer> idleWhileWaiting,
        int preemptions,
        int fallbacks,
        int fastPaths,
        long wallMillis,
        int migrations,
        List<ForecastSample> forecasts) {

    /** Without migrations (none were allowed) or forecasts. */
    public ReplayResult(String policy, long capacityMilli, List<JobRecord> jobs, List<long[]> segments, List<Long> solveMillis,
            List<Integer> strandedGpus, List<Integer> idleWhileWaiting, int preemptions, int fallbacks, int fastPaths, long wallMillis) {
        this(policy, capacityMilli, jobs, segments, solveMillis, strandedGpus, idleWhileWaiting, preemptions, fallbacks, fastPaths,
                wallMillis, 0, List.of());
    }

    /** Without forecasts. */
    public ReplayResult(String policy, long capacityMilli, List<JobRecord> jobs, List<long[]> segments, List<Long> solveMillis,
            List<Integer> strandedGpus, List<Integer> idleWhileWaiting, int preemptions, int fallbacks, int fastPaths, long wallMillis,
            int migrations) {
        this(policy, capacityMilli, jobs, segments, solveMillis, strandedGpus, idleWhileWaiting, preemptions, fallbacks, fastPaths,
                wallMillis, migrations, List.of());
    }

    /** The same result under another name (a policy run with another option, e.g. {@code timefold@m0.5}). */
    public ReplayResult named(String name) {
        return new ReplayResult(name, capacityMilli, jobs, segments, solveMillis, strandedGpus, idleWhileWaiting, preemptions, fallbacks,
                fastPaths, wallMillis, migrations, forecasts);
    }
}
