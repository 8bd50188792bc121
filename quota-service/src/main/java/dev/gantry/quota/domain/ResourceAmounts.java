package dev.gantry.quota.domain;

import java.util.Map;
import java.util.TreeMap;

/**
 * Definite amounts of the resources Gantry shares (a guarantee, a job's request, an allocation):
 * GPUs, GPUs of named models (a subset of {@code gpus}), CPU in millicores, memory in MiB.
 */
public record ResourceAmounts(int gpus, long cpuMillis, long memoryMiB, Map<String, Integer> gpusByModel) {

    public static final ResourceAmounts ZERO = new ResourceAmounts(0, 0, 0, Map.of());

    public ResourceAmounts {
        gpusByModel = gpusByModel == null ? Map.of() : Map.copyOf(new TreeMap<>(gpusByModel));
    }

    public static ResourceAmounts ofGpus(int gpus) {
        return new ResourceAmounts(gpus, 0, 0, Map.of());
    }

    public Amounts toAmounts() {
        return new Amounts(gpus, cpuMillis, memoryMiB);
    }
}
