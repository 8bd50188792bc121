package dev.gantry.placement.engine.solver;

/** One pod of an option: task name, node and concrete GPU indices. */
public record OptionTask(String task, int node, String nodeName, int[] gpus, Integer milli, long cpuMillis, long memoryMiB) {
}
