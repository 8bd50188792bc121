package dev.gantry.simulator.replay;

import dev.gantry.placement.engine.forecast.StartForecaster;
import dev.gantry.placement.engine.planner.SolverProfile;

/**
 * How a replay runs: scheduling window length, the solver's deadline per window, whether
 * running jobs may be preempted (checkpoint-restart: they resume with the work left), and
 * whether every plan is checked with the engine's PlanValidator, whether timefold skips
 * its solver where greedy places every waiting job ({@code FastPathPlanner}), and whether
 * timefold reserves GPUs for the head of the line from the replay's runtime estimates
 * ({@code ReservingPlanner}), and {@code solverMoves}: null, the solver works to the profile's
 * deadline; else it evaluates that many moves per window with a fixed seed, so that a replay
 * repeats exactly ({@code TimefoldPlanner}'s reproducible mode), and {@code reservations}: how
 * many waiting jobs that do not fit get a reservation (1: EASY's head of the line only), and
 * {@code forecaster}: null, no start-time forecasts; else every waiting job's start is forecast
 * when it is first left waiting and again an hour after its submission ({@link ForecastSample}).
 */
public record ReplayOptions(long windowSeconds, SolverProfile profile, boolean preemptible, boolean validate, boolean fastPath,
        boolean reservation, Long solverMoves, int reservations, StartForecaster forecaster) {
    public ReplayOptions {
        if (reservations < 1) {
            throw new IllegalArgumentException("reservations must be at least 1");
        }
        if (windowSeconds <= 0) {
            throw new IllegalArgumentException("window must be positive");
        }
        if (solverMoves != null && solverMoves <= 0) {
            throw new IllegalArgumentException("solver moves must be positive");
        }
    }

    /** No start-time forecasts. */
    public ReplayOptions(long windowSeconds, SolverProfile profile, boolean preemptible, boolean validate, boolean fastPath,
            boolean reservation, Long solverMoves, int reservations) {
        this(windowSeconds, profile, preemptible, validate, fastPath, reservation, solverMoves, reservations, null);
    }

    /** One reservation (EASY's). */
    public ReplayOptions(long windowSeconds, SolverProfile profile, boolean preemptible, boolean validate, boolean fastPath,
            boolean reservation, Long solverMoves) {
        this(windowSeconds, profile, preemptible, validate, fastPath, reservation, solverMoves, 1);
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
