package dev.gantry.placement.engine.solver;

/** What one option puts on one node. */
public record NodeLoad(NodeCapacity node, long cpuMillis, long memoryMiB, long gpuMilli) {
}
