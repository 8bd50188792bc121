package dev.gantry.contracts.nodes;

/**
 * Payload of {@code nodes.upserted}: a node was added or changed (description, cordon or health),
 * and the inventory snapshot version that change produced. Consumers drop an event whose version
 * is not above the last one they applied for the node.
 */
public record NodeChanged(long snapshotVersion, NodeInfo node) {
}
