package dev.gantry.placement.engine.planner;

import dev.gantry.placement.engine.packing.WorkloadMix;
import java.util.List;
import java.util.Locale;
import java.util.function.ToLongFunction;

/**
 * The planner factory: by name, as the service and the CLI select them; and the live window's
 * composition ({@link #window}), which the placement service and the simulator's {@code timefold}
 * policy both build here, so the simulator's figures are the service's.
 */
public final class Planners {
    public static final String DEFAULT = "timefold";
    public static final List<String> NAMES = List.of("timefold", "greedy", "fifo");

    private Planners() {
    }

    /** Greedy packing by expected fragmentation: the service's fast path, Gantry's own greedy. */
    public static Planner fastPath() {
        return new GreedyPlanner(true);
    }

    /** The fast path keeping room for the pods that arrived lately ({@code mix}, may be null). */
    public static Planner fastPath(WorkloadMix mix) {
        return new GreedyPlanner(mix);
    }

    /**
     * For a burst of arrivals: greedy's plan when it places everyone without moving anyone, else
     * {@code planner}'s ({@link GreedyWhenAllFit}).
     */
    public static Planner greedyWhenAllFit(Planner planner, WorkloadMix mix) {
        return new GreedyWhenAllFit(planner, mix);
    }

    /** @throws IllegalArgumentException for an unknown name, naming the valid ones */
    public static Planner byName(String name) {
        return byName(name, null);
    }

    /**
     * As {@link #byName(String)}; {@code mix} (may be null) is the arrivals the timefold
     * planner's fragmentation gauge keeps room for (the baselines ignore it).
     */
    public static Planner byName(String name, WorkloadMix mix) {
        return switch (name == null ? DEFAULT : name.toLowerCase(Locale.ROOT)) {
            case "timefold" -> new TimefoldPlanner(mix);
            case "greedy" -> new GreedyPlanner();
            case "fifo" -> new FifoPlanner();
            default -> throw new IllegalArgumentException("unknown planner " + name + " (one of timefold, greedy, fifo)");
        };
    }

    /**
     * The composition the placement service plans its windows with: {@code planner} inside
     * {@code reservations} EASY reservations ({@link ReservingPlanner}); {@code planner} itself when
     * {@code reservations} is 0 (reservations off) or nothing estimates running jobs' ends.
     *
     * @param estimatedEnd running job name -> estimated end (absolute seconds, the scenario's clock;
     *                     {@link Long#MAX_VALUE} when unknown); null: no estimates at all
     * @throws IllegalArgumentException for a negative number of reservations
     */
    public static Planner window(Planner planner, ToLongFunction<String> estimatedEnd, int reservations) {
        return window(planner, estimatedEnd, reservations, false);
    }

    /** As {@link #window(Planner, ToLongFunction, int)}; {@code perQueue}: {@code reservations} heads per queue, not in all. */
    public static Planner window(Planner planner, ToLongFunction<String> estimatedEnd, int reservations, boolean perQueue) {
        if (reservations < 0) {
            throw new IllegalArgumentException("reservations must be 0 (off) or more, got " + reservations);
        }
        return reservations == 0 || estimatedEnd == null ? planner : new ReservingPlanner(planner, estimatedEnd, reservations, perQueue);
    }

    /** {@link #window(Planner, ToLongFunction, int)} around the planner of that name ({@link #byName(String, WorkloadMix)}). */
    public static Planner window(String name, WorkloadMix mix, ToLongFunction<String> estimatedEnd, int reservations) {
        return window(byName(name, mix), estimatedEnd, reservations);
    }

    /**
     * The service's fast path inside the same reservations as its windows: a lone arrival is
     * placed on GPUs reserved for a waiting job only if it ends (by its estimate) before that job
     * is to start.
     */
    public static Planner fastPath(WorkloadMix mix, ToLongFunction<String> estimatedEnd, int reservations) {
        return window(fastPath(mix), estimatedEnd, reservations);
    }

    /** As {@link #fastPath(WorkloadMix, ToLongFunction, int)}, the reservations per queue when {@code perQueue}. */
    public static Planner fastPath(WorkloadMix mix, ToLongFunction<String> estimatedEnd, int reservations, boolean perQueue) {
        return window(fastPath(mix), estimatedEnd, reservations, perQueue);
    }
}
