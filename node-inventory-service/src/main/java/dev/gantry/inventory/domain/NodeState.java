package dev.gantry.inventory.domain;

import dev.gantry.contracts.nodes.NodeInfo;
import java.time.Duration;
import java.time.Instant;

/**
 * The rules that turn what a source says into what the inventory holds, without any storage: the
 * node a source describes ({@code described}: its own {@code schedulable}, health and heartbeat)
 * combined with the inventory's cordon, and whether a change is worth an event.
 */
public final class NodeState {

    private NodeState() {
    }

    /** What the inventory shows: schedulable only if the source says so and the node is not cordoned. */
    public static NodeInfo effective(NodeInfo described, boolean cordoned, NodeInfo.Health health, Instant lastHeartbeat) {
        return described.withSchedulable(described.schedulable() && !cordoned, cordoned).withHealth(health, lastHeartbeat);
    }

    /** Whether going from {@code before} to {@code after} is a change consumers must hear of (a heartbeat alone is not). */
    public static boolean changed(NodeInfo before, NodeInfo after) {
        return before == null || !before.withLastHeartbeat(null).equals(after.withLastHeartbeat(null));
    }

    /** A Ready node whose last heartbeat is older than the timeout is no longer known to be alive. */
    public static boolean stale(NodeInfo.Health health, Instant lastHeartbeat, Instant now, Duration timeout) {
        return health == NodeInfo.Health.READY && lastHeartbeat != null && lastHeartbeat.isBefore(now.minus(timeout));
    }

    /** A node placement may use: schedulable (not cordoned) and Ready. */
    public static boolean inSnapshot(NodeInfo node) {
        return node.schedulable() && node.health() == NodeInfo.Health.READY;
    }
}
