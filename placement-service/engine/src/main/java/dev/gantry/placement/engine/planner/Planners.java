package dev.gantry.placement.engine.planner;

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

    /** @throws IllegalArgumentException for an unknown name, naming the valid ones */
    public static Planner byName(String name) {
        return switch (name == null ? DEFAULT : name.toLowerCase(Locale.ROOT)) {
            case "timefold" -> new TimefoldPlanner();
            case "greedy" -> new GreedyPlanner();
            case "fifo" -> new FifoPlanner();
            default -> throw new IllegalArgumentException("unknown planner " + name + " (one of timefold, greedy, fifo)");
        };
    }
}
