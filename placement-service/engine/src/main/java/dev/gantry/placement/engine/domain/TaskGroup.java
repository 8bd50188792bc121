package dev.gantry.placement.engine.domain;

/** A group of identical replicas (pods); {@code gpuMilli} non-null asks for a share of one GPU. */
public record TaskGroup(String name, int replicas, int gpusPerReplica, long cpuMillis, long memoryMiB, Integer gpuMilli) {

    /** GPUs one replica holds, in thousandths. */
    public long replicaGpuMilli() {
        return gpuMilli == null ? 1000L * gpusPerReplica : gpuMilli;
    }
}
