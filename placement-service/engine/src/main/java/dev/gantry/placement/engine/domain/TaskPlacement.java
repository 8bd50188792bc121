package dev.gantry.placement.engine.domain;

import java.util.List;

/**
 * Where one pod goes: node and GPU indices; {@code gpuMilli} repeated for a sharing task; {@code migDevices}: the
 * ids of the MIG devices a MIG task gets (its {@code gpus} are then empty).
 */
public record TaskPlacement(String task, String node, List<Integer> gpus, Integer gpuMilli, List<String> migDevices) {
    public TaskPlacement {
        gpus = List.copyOf(gpus);
        migDevices = migDevices == null ? List.of() : List.copyOf(migDevices);
    }

    /** On whole or shared GPUs. */
    public TaskPlacement(String task, String node, List<Integer> gpus, Integer gpuMilli) {
        this(task, node, gpus, gpuMilli, List.of());
    }
}
