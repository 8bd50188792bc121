package dev.gantry.placement.engine.planner;

import dev.gantry.placement.engine.domain.Node;
import dev.gantry.placement.engine.domain.PendingJob;
import dev.gantry.placement.engine.domain.RunningJob;
import dev.gantry.placement.engine.domain.RunningTask;
import dev.gantry.placement.engine.domain.TaskGroup;
import java.util.List;

/** The small clusters of the reservation tests: 8-GPU V100 nodes, one queue {@code team}, one-task jobs. */
final class ReservationFixtures {

    private ReservationFixtures() {
    }

    static Node node(String name) {
        return new Node(name, "V100", 8, null, null, 64_000, 512_000, null, null, null, null, true, false);
    }

    /** A running one-task job holding {@code gpus} on {@code node}. */
    static RunningJob running(String name, String node, List<Integer> gpus) {
        return new RunningJob(name, "team", 0, false, false, false, 0, List.of(new RunningTask("w-0", node, gpus, 1000, 1000, null)));
    }

    /** A waiting one-task job of {@code gpus} GPUs that runs {@code runtime} seconds. */
    static PendingJob waiting(String name, int gpus, long submitted, long runtime) {
        return new PendingJob(name, "team", 0, submitted, List.of(new TaskGroup("w", 1, gpus, 1000, 1000, null)), 1, null, null, null,
                false, null, null, false, false, runtime);
    }
}
