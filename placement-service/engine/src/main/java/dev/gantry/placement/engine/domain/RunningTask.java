package dev.gantry.placement.engine.domain;

import java.util.List;

/** A running pod: its node and GPU indices; {@code gpuMilli} non-null for a sharing task. */
public record RunningTask(String name, String node, List<Integer> gpus, long cpuMillis, long memoryMiB, Integer gpuMilli) {
    public RunningTask {
        gpus = List.copyOf(gpus);
    }

    /** GPUs held in thousandths: a whole GPU is 1000. */
    public long gpuMilliTotal() {
        return (long) gpus.size() * (gpuMilli == null ? 1000 : gpuMilli);
    }
}
