package dev.gantry.placement.engine.domain;

import java.util.List;

/**
 * A running pod: its node and GPU indices; {@code gpuMilli} non-null for a sharing task; a MIG task holds no
 * GPU index but {@code migDevices} (ids of the node's MIG devices) of {@code migProfile}.
 */
public record RunningTask(String name, String node, List<Integer> gpus, long cpuMillis, long memoryMiB, Integer gpuMilli, String migProfile,
        List<String> migDevices) {
    public RunningTask {
        gpus = List.copyOf(gpus);
        migDevices = migDevices == null ? List.of() : List.copyOf(migDevices);
    }

    /** A task on whole or shared GPUs. */
    public RunningTask(String name, String node, List<Integer> gpus, long cpuMillis, long memoryMiB, Integer gpuMilli) {
        this(name, node, gpus, cpuMillis, memoryMiB, gpuMilli, null, List.of());
    }

    /** GPUs held in thousandths: a whole GPU is 1000, a MIG device its slices of seven. */
    public long gpuMilliTotal() {
        long mig = migProfile == null ? 0 : (long) migDevices.size() * MigProfiles.milli(migProfile);
        return (long) gpus.size() * (gpuMilli == null ? 1000 : gpuMilli) + mig;
    }
}
