package dev.gantry.placement.engine.domain;

import java.util.List;

/** Where one pod goes: node and GPU indices; {@code gpuMilli} repeated for a sharing task. */
public record TaskPlacement(String task, String node, List<Integer> gpus, Integer gpuMilli) {
    public TaskPlacement {
        gpus = List.copyOf(gpus);
    }
}
