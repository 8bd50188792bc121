package dev.gantry.contracts.nodes;

import java.util.List;
import java.util.Map;

/**
 * A node as the whole system sees it: the node of the scenario format (FORMAT.md) plus its health.
 * It is the payload of {@code nodes.upserted} and what inventory snapshots are made of.
 *
 * @param nvlinkIslands GPU indices that share NVLink/NVSwitch; GPUs in no island are PCIe-only
 * @param numaNodes     GPU indices per NUMA node (empty: unknown)
 * @param ibFabric      InfiniBand fabric name, null without InfiniBand
 */
public record NodeInfo(
        String name,
        String gpuModel,
        int gpus,
        List<List<Integer>> nvlinkIslands,
        List<List<Integer>> numaNodes,
        boolean gpuSharing,
        long cpuMillis,
        long memoryMiB,
        Topology topology,
        String ibFabric,
        Map<String, String> labels,
        List<Taint> taints,
        boolean schedulable,
        Health health) {

    /** Where the node sits in the network tree; a null level is unknown. */
    public record Topology(String zone, String spine, String leaf) {
    }

    /** A Kubernetes-style taint; {@code NoSchedule} keeps out jobs that do not tolerate it. */
    public record Taint(String key, String value, String effect) {
    }

    public enum Health { READY, NOT_READY, UNKNOWN }
}
