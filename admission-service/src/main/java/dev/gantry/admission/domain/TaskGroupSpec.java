package dev.gantry.admission.domain;

import java.util.List;
import java.util.Map;

/**
 * One kind of pod in a job: {@code replicas} identical pods, each with {@code gpusPerReplica} whole
 * GPUs, or a {@code gpuMilli} share of one GPU (then {@code gpusPerReplica} is 1), or, with
 * {@code migProfile} ({@code 1g.10gb}), {@code gpusPerReplica} MIG devices of that profile (as a pod asks
 * NVIDIA's device plugin for {@code nvidia.com/mig-1g.10gb: 2}); and what the pod runs ({@code image},
 * {@code command}; on a node agent also where, {@code workingDir}, and with what environment, {@code env})
 * once placed.
 */
public record TaskGroupSpec(String name, int replicas, int gpusPerReplica, Integer gpuMilli, long cpuMillis, long memoryMiB,
        String image, List<String> command, String workingDir, Map<String, String> env, String migProfile) {

    /** Whole GPUs or a share, no MIG. */
    public TaskGroupSpec(String name, int replicas, int gpusPerReplica, Integer gpuMilli, long cpuMillis, long memoryMiB,
            String image, List<String> command, String workingDir, Map<String, String> env) {
        this(name, replicas, gpusPerReplica, gpuMilli, cpuMillis, memoryMiB, image, command, workingDir, env, null);
    }

    /** Without working directory and environment. */
    public TaskGroupSpec(String name, int replicas, int gpusPerReplica, Integer gpuMilli, long cpuMillis, long memoryMiB,
            String image, List<String> command) {
        this(name, replicas, gpusPerReplica, gpuMilli, cpuMillis, memoryMiB, image, command, null, null);
    }

    /** GPUs the group asks for: whole GPUs, shares and MIG devices each count one (as quota's per-job limits count them). */
    public int gpus() {
        return replicas * gpusPerReplica;
    }
}
