package dev.gantry.placement.engine.planner;

import dev.gantry.placement.engine.packing.WorkloadMix;
import java.util.List;
import java.util.Locale;

/** The planner factory: by name, as the service and the CLI select them. */
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
}
