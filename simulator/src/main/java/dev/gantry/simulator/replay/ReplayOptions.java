package dev.gantry.simulator.replay;

import dev.gantry.placement.engine.planner.SolverProfile;

/**
 * How a replay runs: scheduling window length, the solver's deadline per window, whether
 * running jobs may be preempted (checkpoint-restart: they resume with the work left), and
 * whether every plan is checked with the engine's PlanValidator, whether timefold skips
 * its solver where greedy places every waiting job ({@code FastPathPlanner}), and whether
 * timefold reserves GPUs for the head of the line from the replay's runtime estimates
 * ({@code ReservingPlanner}).
 */
public record ReplayOptions(long windowSeconds, SolverProfile profile, boolean preemptible, boolean validate, boolean fastPath,
        boolean reservation) {
    public ReplayOptions {
        if (windowSeconds <= 0) {
            throw new IllegalArgumentException("window must be positive");
        }
    }

    /** With timefold's reservation on. */
    public ReplayOptions(long windowSeconds, SolverProfile profile, boolean preemptible, boolean validate, boolean fastPath) {
        this(windowSeconds, profile, preemptible, validate, fastPath, true);
    }
}
