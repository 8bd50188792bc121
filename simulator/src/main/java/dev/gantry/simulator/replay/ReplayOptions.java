package dev.gantry.simulator.replay;

import dev.gantry.placement.engine.planner.SolverProfile;

/**
 * How a replay runs: scheduling window length, the solver's deadline per window, whether
 * running jobs may be preempted (checkpoint-restart: they resume with the work left), and
 * whether every plan is checked with the engine's PlanValidator, whether timefold skips
 * its solver where greedy places every waiting job ({@code FastPathPlanner}), and whether
 * timefold reserves GPUs for the head of the line from the replay's runtime estimates
 * ({@code ReservingPlanner}), and {@code solverMoves}: null, the solver works to the profile's
 * deadline; else it evaluates that many moves per window with a fixed seed, so that a replay
 * repeats exactly ({@code TimefoldPlanner}'s reproducible mode).
 */
public record ReplayOptions(long windowSeconds, SolverProfile profile, boolean preemptible, boolean validate, boolean fastPath,
        boolean reservation, Long solverMoves) {
    public ReplayOptions {
        if (windowSeconds <= 0) {
            throw new IllegalArgumentException("window must be positive");
        }
        if (solverMoves != null && solverMoves <= 0) {
            throw new IllegalArgumentException("solver moves must be positive");
        }
    }

    /** The solver bound by the profile's deadline. */
    public ReplayOptions(long windowSeconds, SolverProfile profile, boolean preemptible, boolean validate, boolean fastPath,
            boolean reservation) {
        this(windowSeconds, profile, preemptible, validate, fastPath, reservation, null);
    }

    /** With timefold's reservation on. */
    public ReplayOptions(long windowSeconds, SolverProfile profile, boolean preemptible, boolean validate, boolean fastPath) {
        this(windowSeconds, profile, preemptible, validate, fastPath, true);
    }
}
