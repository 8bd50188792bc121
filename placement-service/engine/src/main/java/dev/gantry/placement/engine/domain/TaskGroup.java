package dev.gantry.placement.engine.domain;

/**
 * A group of identical replicas (pods); {@code gpuMilli} non-null asks for a share of one GPU; {@code migProfile}
 * non-null asks for {@code gpusPerReplica} MIG devices of that profile per replica instead of whole GPUs (as a
 * pod asks NVIDIA's device plugin for {@code nvidia.com/mig-1g.10gb: 2}).
 */
public record TaskGroup(String name, int replicas, int gpusPerReplica, long cpuMillis, long memoryMiB, Integer gpuMilli, String migProfile) {

    /** Whole GPUs or a share, no MIG. */
    public TaskGroup(String name, int replicas, int gpusPerReplica, long cpuMillis, long memoryMiB, Integer gpuMilli) {
        this(name, replicas, gpusPerReplica, cpuMillis, memoryMiB, gpuMilli, null);
    }

    /** GPUs one replica holds, in thousandths (a MIG device: its slices of seven, see {@link MigProfiles}). */
    public long replicaGpuMilli() {
        if (migProfile != null) {
            return (long) gpusPerReplica * MigProfiles.milli(migProfile);
        }
        return gpuMilli == null ? 1000L * gpusPerReplica : gpuMilli;
    }
}
