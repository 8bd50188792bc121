package dev.gantry.placement.window;

import java.time.Duration;

/**
 * How long the solver may run in one window. The profile's time limit can be the whole window's
 * budget: reading the state and building the scenario come before the solve, and checking the plan
 * and binding it come after. The solver then gets what is left once the time already spent and the
 * time the last windows took after their solve are taken off, but never less than {@code minShare}
 * of the limit.
 *
 * <p>The service keeps the whole limit for the solver by default (minShare 1): on 1,000 nodes with
 * a fast profile, a quarter of it was too short for the solver to build its model, so every window
 * kept the greedy plan and no waiting high-priority job preempted anyone (docs/benchmarks.md).
 */
final class WindowBudget {

    /** Weight of the newest window in the running estimate of the time after the solve. */
    private static final double NEWEST = 0.3;

    private final Duration limit;
    private final Duration floor;
    private volatile long afterSolveNanos;

    /** @param minShare the least share of the limit the solver gets, 0..1 (1: always the whole limit) */
    WindowBudget(Duration limit, double minShare) {
        if (!(minShare >= 0 && minShare <= 1)) {
            throw new IllegalArgumentException("gantry.placement.solver.min-share must be between 0 and 1, got " + minShare);
        }
        this.limit = limit;
        this.floor = Duration.ofNanos(Math.round(limit.toNanos() * minShare));
    }

    /** The solver's limit for a window that began at {@code windowStart} and is about to solve at {@code now} (nanoTime). */
    Duration solveLimit(long windowStart, long now) {
        long left = limit.toNanos() - (now - windowStart) - afterSolveNanos;
        return Duration.ofNanos(Math.max(floor.toNanos(), Math.min(limit.toNanos(), left)));
    }

    /** What a window took after its solve (checking the plan, binding). */
    void afterSolveTook(long nanos) {
        long previous = afterSolveNanos;
        afterSolveNanos = previous == 0 ? nanos : Math.round(NEWEST * nanos + (1 - NEWEST) * previous);
    }

    long afterSolveNanos() {
        return afterSolveNanos;
    }
}
