package dev.gantry.admission.domain;

/**
 * One kind of pod in a job: {@code replicas} identical pods, each with {@code gpusPerReplica} whole
 * GPUs, or a {@code gpuMilli} share of one GPU (then {@code gpusPerReplica} is 1).
 */
public record TaskGroupSpec(String name, int replicas, int gpusPerReplica, Integer gpuMilli, long cpuMillis, long memoryMiB) {

    public int gpus() {
        return replicas * gpusPerReplica;
    }
}
