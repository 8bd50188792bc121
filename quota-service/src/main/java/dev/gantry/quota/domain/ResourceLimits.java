package dev.gantry.quota.domain;

import java.util.Map;
import java.util.TreeMap;

/**
 * Upper bounds (a capability): a null field is unbounded; a model absent from {@code gpusByModel}
 * is bounded only by {@code gpus}.
 */
public record ResourceLimits(Integer gpus, Long cpuMillis, Long memoryMiB, Map<String, Integer> gpusByModel) {

    public static final ResourceLimits UNBOUNDED = new ResourceLimits(null, null, null, Map.of());

    public ResourceLimits {
        gpusByModel = gpusByModel == null ? Map.of() : Map.copyOf(new TreeMap<>(gpusByModel));
    }

    public static ResourceLimits ofGpus(Integer gpus) {
        return new ResourceLimits(gpus, null, null, Map.of());
    }

    /** As amounts for the fair-share computation: unbounded is infinite. */
    public Amounts toAmounts() {
        return new Amounts(gpus == null ? Double.POSITIVE_INFINITY : gpus,
                cpuMillis == null ? Double.POSITIVE_INFINITY : cpuMillis,
                memoryMiB == null ? Double.POSITIVE_INFINITY : memoryMiB);
    }
}
