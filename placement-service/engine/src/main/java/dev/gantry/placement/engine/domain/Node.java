package dev.gantry.placement.engine.domain;

import java.util.List;
import java.util.Map;

/**
 * A GPU node; {@code migDevices} are the MIG devices of its GPUs in MIG mode (empty: none). Defaults of FORMAT.md are resolved on parsing: {@code nvlinkIslands} is never null
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
        boolean gpuSharing,
        List<MigDevice> migDevices) {

    /** A node without MIG devices. */
    public Node(String name, String gpuModel, int gpus, List<List<Integer>> nvlinkIslands, List<List<Integer>> numaNodes, long cpuMillis,
            long memoryMiB, Topology topology, String ibFabric, Map<String, String> labels, List<Taint> taints, boolean schedulable,
            boolean gpuSharing) {
        this(name, gpuModel, gpus, nvlinkIslands, numaNodes, cpuMillis, memoryMiB, topology, ibFabric, labels, taints, schedulable,
                gpuSharing, List.of());
    }

    public Node {
        nvlinkIslands = nvlinkIslands == null ? singletonIslands(gpus) : List.copyOf(nvlinkIslands.stream().map(List::copyOf).toList());
        numaNodes = numaNodes == null ? List.of() : List.copyOf(numaNodes.stream().map(List::copyOf).toList());
        topology = topology == null ? Topology.UNKNOWN : topology;
        labels = labels == null ? Map.of() : Map.copyOf(labels);
        taints = taints == null ? List.of() : List.copyOf(taints);
        migDevices = migDevices == null ? List.of() : List.copyOf(migDevices);
    }

    /** The GPUs in MIG mode (carrying MIG devices) as a bit mask: never given out whole or shared. */
    public long migGpuMask() {
        long mask = 0;
        for (MigDevice d : migDevices) {
            if (d.gpu() >= 0 && d.gpu() < 64) {
                mask |= 1L << d.gpu();
            }
        }
        return mask;
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
