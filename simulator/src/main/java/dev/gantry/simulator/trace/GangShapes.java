package dev.gantry.simulator.trace;

import dev.gantry.placement.engine.domain.Network;
import dev.gantry.placement.engine.domain.NetworkLevel;
import dev.gantry.placement.engine.domain.TaskGroup;
import java.util.ArrayList;
import java.util.List;

/** How a GPU count from a job-level trace becomes pods: up to 8 GPUs one pod, above that a gang of 8-GPU pods. */
public final class GangShapes {
    public static final int GPUS_PER_NODE = 8;

    private GangShapes() {
    }

    /** {@code gpus} whole GPUs: one pod when it fits a node, else 8-GPU pods plus one pod for the rest. */
    public static List<TaskGroup> pods(int gpus) {
        if (gpus <= GPUS_PER_NODE) {
            return List.of(new TaskGroup("worker", 1, gpus, 0, 0, null));
        }
        List<TaskGroup> groups = new ArrayList<>();
        groups.add(new TaskGroup("worker", gpus / GPUS_PER_NODE, GPUS_PER_NODE, 0, 0, null));
        if (gpus % GPUS_PER_NODE != 0) {
            groups.add(new TaskGroup("rest", 1, gpus % GPUS_PER_NODE, 0, 0, null));
        }
        return groups;
    }

    /** A multi-node gang prefers one leaf (fast all-reduce) but may span them; one pod needs nothing. */
    public static Network network(int gpus, NetworkLevel required) {
        if (required != null && required != NetworkLevel.ANY) {
            return new Network(required, null);
        }
        return gpus > GPUS_PER_NODE ? new Network(NetworkLevel.ANY, NetworkLevel.LEAF) : Network.ANY;
    }
}
