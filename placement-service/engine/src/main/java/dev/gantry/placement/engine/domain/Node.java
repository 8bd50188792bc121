package dev.gantry.placement.engine.domain;

import java.util.List;
import java.util.Map;

/**
 * A GPU node. Defaults of FORMAT.md are resolved on parsing: {@code nvlinkIslands} is never null
 * (PCIe-only nodes get one island per GPU), {@code numaNodes} may be empty, capacities of
 * {@link Long#MAX_VALUE} mean "not given" (unbounded, as the checker treats them).
 */
public record Node(
        String name,
        String gpuModel,
        int gpus,
        List<List<Integer>> nvlinkIslands,
        List<List<Integer>> numaNodes,
        long cpuMillis,
        long memoryMiB,
        Topology topology,
        String ibFabric,
        Map<String, String> labels,
        List<Taint> taints,
        boolean schedulable,
        boolean gpuSharing) {

    public Node {
        nvlinkIslands = nvlinkIslands == null ? singletonIslands(gpus) : List.copyOf(nvlinkIslands.stream().map(List::copyOf).toList());
        numaNodes = numaNodes == null ? List.of() : List.copyOf(numaNodes.stream().map(List::copyOf).toList());
        topology = topology == null ? Topology.UNKNOWN : topology;
        labels = labels == null ? Map.of() : Map.copyOf(labels);
        taints = taints == null ? List.of() : List.copyOf(taints);
    }

    private static List<List<Integer>> singletonIslands(int gpus) {
        return java.util.stream.IntStream.range(0, Math.max(gpus, 0)).mapToObj(List::of).toList();
    }

    /** The GPU groups a replica with this topology must fit in; for ANY the whole node. */
    public List<List<Integer>> groups(GpuTopology topology) {
        return switch (topology) {
            case NVLINK -> nvlinkIslands;
            case NUMA -> numaNodes;
            case ANY -> List.of(java.util.stream.IntStream.range(0, gpus).boxed().toList());
        };
    }
}
