package dev.gantry.placement.cluster;

import dev.gantry.contracts.nodes.NodeInfo;
import dev.gantry.placement.window.ScenarioBuilder;
import java.util.List;

/**
 * GPUs in use by someone Gantry did not place (kubernetes mode with Dynamic Resource Allocation: devices
 * allocated to ResourceClaims of pods kube-scheduler placed). A window plans around them as around a
 * running job that may not move. Empty when there is nothing to know (standalone, device-plugin mode).
 */
public interface HeldElsewhere {

    /**
     * Allocation-like rows, one per node (and per MIG profile), under a job id of their own that no running job has.
     * {@code nodes} is the window's view of the nodes: a MIG device it lists is held as that device; one it does not
     * list (the inventory has not caught up) holds its whole GPU, unless that GPU is in MIG mode there.
     */
    List<ScenarioBuilder.Held> held(List<NodeInfo> nodes);

    /** As {@link #held(List)} without a view of the nodes: every MIG device holds its whole GPU. */
    default List<ScenarioBuilder.Held> held() {
        return held(List.of());
    }
}
