package dev.gantry.placement.engine.solver;

/**
 * A node as a capacity key: CPU, memory and GPUs (milli) left after pinned work, and whether
 * pinned work already uses it (then it is not a whole free node whatever the plan does).
 */
public record NodeCapacity(int node, String name, long cpuMillis, long memoryMiB, long gpuMilli, long totalGpuMilli, boolean pinnedBusy) {
}
