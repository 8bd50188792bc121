package dev.gantry.simulator.policy;

import dev.gantry.placement.engine.packing.WorkloadMix;
import dev.gantry.placement.engine.planner.Planner;
import dev.gantry.placement.engine.planner.Planners;
import dev.gantry.placement.engine.planner.ReservingPlanner;
import dev.gantry.placement.engine.planner.TimefoldPlanner;
import java.util.List;
import java.util.function.ToLongFunction;

/**
 * The policies a replay can drive: the engine's planners (the same the service uses) plus
 * backfill and las, and {@code greedy-frag}: the fragmentation-aware greedy pass the solver
 * starts from (the service's fast path), to see what the solver adds to it; {@code bestfit-paper}:
 * the FGD paper's BestFit score, to check the OpenB replay against its published figures;
 * {@code greedy-reserving}: plain greedy inside timefold's reservation ({@link ReservingPlanner}
 * around {@code greedy}), deterministic and fast, to compare reservation variants without the
 * solver's run-to-run spread.
 *
 * <p>{@code timefold} in a replay that knows running jobs' estimated ends (the job-trace replay)
 * is the placement service's composition, built by the same factory ({@link Planners#window}):
 * EASY reservations for the head(s) of the line ({@link ReservingPlanner}, {@code reservations}
 * of them, 1 by default as in the service), then the solver plans the rest. The one difference is
 * the optional skip of the solver in windows greedy fully places ({@link FastPathPlanner}), inside
 * the reservations, which cannot change a window's medium score.
 */
public final class Policies {
    public static final List<String> NAMES = List.of("timefold", "greedy", "fifo", "backfill", "las", "greedy-frag", "bestfit-paper",
            "greedy-reserving");

    private Policies() {
    }

    /** @param estimatedEnd running job -> estimated end, for the reservations; null when the replay has none */
    public static Planner create(String name, ToLongFunction<String> estimatedEnd) {
        return create(name, estimatedEnd, false);
    }

    /**
     * @param fastPath skip the solver where greedy places every waiting job (see {@link FastPathPlanner})
     */
    public static Planner create(String name, ToLongFunction<String> estimatedEnd, boolean fastPath) {
        return create(name, estimatedEnd, fastPath, null);
    }

    /**
     * @param mix the arrivals so far, which Gantry's fragmentation gauge keeps room for (the
     *     replay records them; null: each window's own workload)
     */
    public static Planner create(String name, ToLongFunction<String> estimatedEnd, boolean fastPath, WorkloadMix mix) {
        return create(name, estimatedEnd, fastPath, estimatedEnd != null, mix);
    }

    /**
     * @param estimatedEnd      running job -> estimated end (absolute seconds; Long.MAX_VALUE if unknown),
     *                          or null when the replay has no estimates at all
     * @param timefoldReserves  timefold reserves for the head of the line (only with {@code estimatedEnd})
     */
    public static Planner create(String name, ToLongFunction<String> estimatedEnd, boolean fastPath, boolean timefoldReserves,
            WorkloadMix mix) {
        return create(name, estimatedEnd, fastPath, timefoldReserves, mix, null);
    }

    /**
     * @param solverMoves null: the solver works to the profile's deadline; else it evaluates this
     *                    many moves per window with a fixed seed (reproducible replays)
     */
    public static Planner create(String name, ToLongFunction<String> estimatedEnd, boolean fastPath, boolean timefoldReserves,
            WorkloadMix mix, Long solverMoves) {
        return create(name, estimatedEnd, fastPath, timefoldReserves, mix, solverMoves, 1);
    }

    /**
     * @param reservations how many waiting jobs that do not fit get a reservation in timefold's
     *                     (and greedy-reserving's) {@link ReservingPlanner}: 1 is EASY's head of the line
     */
    public static Planner create(String name, ToLongFunction<String> estimatedEnd, boolean fastPath, boolean timefoldReserves,
            WorkloadMix mix, Long solverMoves, int reservations) {
        ToLongFunction<String> ends = estimatedEnd == null ? job -> Long.MAX_VALUE : estimatedEnd;
        if ("bestfit-paper".equals(name)) {
            return new PaperBestFitPlanner();
        }
        if ("greedy-frag".equals(name)) {
            return Planners.fastPath(mix);
        }
        if ("las".equals(name)) {
            return new LasPlanner();
        }
        if ("greedy-reserving".equals(name)) {
            return Planners.window("greedy", mix, estimatedEnd, reservations);
        }
        if ("backfill".equals(name)) {
            return new BackfillPlanner(ends);
        }
        if (!Planners.NAMES.contains(name)) {
            throw new IllegalArgumentException("unknown policy " + name + " (one of " + String.join(", ", NAMES) + ")");
        }
        Planner p = "timefold".equals(name) && solverMoves != null ? new TimefoldPlanner(mix, solverMoves) : Planners.byName(name, mix);
        if (!"timefold".equals(name)) {
            return p;
        }
        Planner timefold = fastPath ? new FastPathPlanner(p, mix) : p;
        // the service's composition, from the same factory: its window planner inside its reservations
        return Planners.window(timefold, estimatedEnd, timefoldReserves ? reservations : 0);
    }
}
