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
 * many waiting jobs that do not fit get a reservation (1: EASY's head of the line only);
 * {@code forecaster}: null, no start-time forecasts; else every waiting job's start is forecast
 * when it is first left waiting and again an hour after its submission ({@link ForecastSample});
 * {@code migratableFraction} of the jobs may be moved while they run, each move costing
 * {@code moveCostSeconds} (see {@link #withMigration}).
 */
public record ReplayOptions(long windowSeconds, SolverProfile profile, boolean preemptible, boolean validate, boolean fastPath,
        boolean reservation, Long solverMoves, int reservations, StartForecaster forecaster, double migratableFraction,
        long moveCostSeconds) {
    public ReplayOptions {
        if (migratableFraction < 0 || migratableFraction > 1) {
            throw new IllegalArgumentException("migratable fraction must be 0..1");
        }
        if (moveCostSeconds < 0) {
            throw new IllegalArgumentException("move cost must be 0 or more");
        }
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

    /** No start-time forecasts, no job migratable. */
    public ReplayOptions(long windowSeconds, SolverProfile profile, boolean preemptible, boolean validate, boolean fastPath,
            boolean reservation, Long solverMoves, int reservations) {
        this(windowSeconds, profile, preemptible, validate, fastPath, reservation, solverMoves, reservations, null);
    }

    /** No job migratable. */
    public ReplayOptions(long windowSeconds, SolverProfile profile, boolean preemptible, boolean validate, boolean fastPath,
            boolean reservation, Long solverMoves, int reservations, StartForecaster forecaster) {
        this(windowSeconds, profile, preemptible, validate, fastPath, reservation, solverMoves, reservations, forecaster, 0, 0);
    }

    /**
     * The same, with {@code fraction} of the jobs migratable (chosen by a hash of their name, so
     * every policy gets the same ones) and each move costing the job {@code costSeconds} of
     * progress (its checkpoint, stop and restart), as the placement service's binder carries it out.
     */
    public ReplayOptions withMigration(double fraction, long costSeconds) {
        return new ReplayOptions(windowSeconds, profile, preemptible, validate, fastPath, reservation, solverMoves, reservations, forecaster,
                fraction, costSeconds);
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
