package dev.gantry.contracts.nodes;

import java.util.List;

/**
 * What {@code GET /v1/snapshot} returns: every node placement may use (schedulable and Ready), and
 * the inventory version it reflects. The version only grows, across restarts too.
 */
public record NodeSnapshot(long version, List<NodeInfo> nodes) {
}
