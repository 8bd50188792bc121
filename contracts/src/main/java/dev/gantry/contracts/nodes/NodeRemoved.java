package dev.gantry.contracts.nodes;

/** Payload of {@code nodes.removed}: the node is gone, as of this inventory snapshot version. */
public record NodeRemoved(long snapshotVersion, String name) {
}
