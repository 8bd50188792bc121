package dev.gantry.placement.engine.domain;

import java.util.List;

/** One scheduling window frozen: the immutable input of every planner. */
public record Scenario(
        String format,
        String name,
        long nowSeconds,
        List<Node> nodes,
        List<Queue> queues,
        List<RunningJob> running,
        List<PendingJob> pending) {

    public static final String FORMAT = "gantry-scenario/v1";

    public Scenario {
        nodes = List.copyOf(nodes);
        queues = List.copyOf(queues);
        running = List.copyOf(running);
        pending = List.copyOf(pending);
    }
}
