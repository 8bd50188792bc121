package dev.gantry.placement.cluster;

import dev.gantry.placement.window.ScenarioBuilder;
import java.util.List;

/**
 * GPUs in use by someone Gantry did not place (kubernetes mode with Dynamic Resource Allocation: devices
 * allocated to ResourceClaims of pods kube-scheduler placed). A window plans around them as around a
 * running job that may not move. Empty when there is nothing to know (standalone, device-plugin mode).
 */
public interface HeldElsewhere {

    /** Allocation-like rows, one per node, under a job id of their own that no running job has. */
    List<ScenarioBuilder.Held> held();
}
