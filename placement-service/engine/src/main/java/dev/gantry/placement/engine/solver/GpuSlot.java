package dev.gantry.placement.engine.solver;

/**
 * One GPU of one node as a capacity key; {@code pinnedMilli} is what pinned running work already
 * holds on it (0, or a sharing amount), so options may add up to {@code 1000 - pinnedMilli}.
 */
public record GpuSlot(int node, int gpu, String nodeName, int pinnedMilli) {
}
