package dev.gantry.admission.domain;

import java.util.List;

/**
 * One kind of pod in a job: {@code replicas} identical pods, each with {@code gpusPerReplica} whole
 * GPUs, or a {@code gpuMilli} share of one GPU (then {@code gpusPerReplica} is 1), and what the pod
 * runs ({@code image}, {@code command}) once placed.
 */
public record TaskGroupSpec(String name, int replicas, int gpusPerReplica, Integer gpuMilli, long cpuMillis, long memoryMiB,
        String image, List<String> command) {

    public int gpus() {
        return replicas * gpusPerReplica;
    }
}
