package dev.gantry.contracts.nodes;

import java.time.Instant;
import java.util.List;
import java.util.Map;

/**
 * A node as the whole system sees it: the node of the scenario format (FORMAT.md) plus what the
 * inventory knows besides (per-GPU memory, MIG, InfiniBand HCAs, cordon, health and heartbeat).
 * It is carried by {@code nodes.upserted} ({@link NodeChanged}) and is what inventory snapshots are
 * made of. Null collections are read as empty, so two descriptions of the same node compare equal.
 *
 * @param nvlinkIslands GPU indices that share NVLink/NVSwitch; GPUs in no island are PCIe-only
 * @param numaNodes     GPU indices per NUMA node (empty: unknown)
 * @param ibFabric      InfiniBand fabric name, null without InfiniBand
 * @param schedulable   whether placement may use the node: its source says so and it is not cordoned
 * @param gpuMemoryMiB  memory of one GPU in MiB (0: unknown)
 * @param mig           MIG partitioning, null when the GPUs are not MIG-capable or it is unknown
 * @param ibHcas        InfiniBand host channel adapters on the node (0: none or unknown)
 * @param cordoned      cordoned through the inventory API ({@code :cordon}); then not schedulable
 * @param lastHeartbeat when the node's source last said it was alive (null: never / not tracked)
 * @param source        who describes the node in the inventory: {@code AGENT} (a node agent, which also runs its
 *                      tasks), {@code FILE} (a cluster file: the simulated executor runs its jobs),
 *                      {@code KUBERNETES}; null when unknown (an older producer). Set by the inventory, never by
 *                      the node's own description
 * @param simulated     the node's GPUs are declared, not real (a node agent without {@code nvidia-smi}, or
 *                      {@code --simulate}); its tasks still run as processes
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
        Health health,
        long gpuMemoryMiB,
        Mig mig,
        int ibHcas,
        boolean cordoned,
        Instant lastHeartbeat,
        String source,
        boolean simulated) {

    /** The node agent's source: a node so described runs its tasks through its agent. */
    public static final String SOURCE_AGENT = "AGENT";

    /** A node whose source is not (yet) known, and not simulated: what producers before {@code source} sent. */
    public NodeInfo(String name, String gpuModel, int gpus, List<List<Integer>> nvlinkIslands, List<List<Integer>> numaNodes,
            boolean gpuSharing, long cpuMillis, long memoryMiB, Topology topology, String ibFabric, Map<String, String> labels,
            List<Taint> taints, boolean schedulable, Health health, long gpuMemoryMiB, Mig mig, int ibHcas, boolean cordoned,
            Instant lastHeartbeat) {
        this(name, gpuModel, gpus, nvlinkIslands, numaNodes, gpuSharing, cpuMillis, memoryMiB, topology, ibFabric, labels, taints,
                schedulable, health, gpuMemoryMiB, mig, ibHcas, cordoned, lastHeartbeat, null, false);
    }

    public NodeInfo {
        nvlinkIslands = nvlinkIslands == null ? List.of() : nvlinkIslands;
        numaNodes = numaNodes == null ? List.of() : numaNodes;
        topology = topology == null ? Topology.UNKNOWN : topology;
        labels = labels == null ? Map.of() : labels;
        taints = taints == null ? List.of() : taints;
        health = health == null ? Health.UNKNOWN : health;
    }

    /** Where the node sits in the network tree; a null level is unknown. */
    public record Topology(String zone, String spine, String leaf) {
        public static final Topology UNKNOWN = new Topology(null, null, null);
    }

    /** A Kubernetes-style taint; {@code NoSchedule} keeps out jobs that do not tolerate it. */
    public record Taint(String key, String value, String effect) {
    }

    /**
     * MIG partitioning: how many MIG devices of each profile, and (where the source knows them) the devices
     * one by one. A GPU that carries a MIG device is in MIG mode: it is never given out whole or shared.
     *
     * @param strategy {@code none}, {@code single} or {@code mixed} (the {@code nvidia.com/mig.strategy} label)
     * @param profiles MIG devices on the node by profile ({@code 1g.10gb} → 7); empty when unknown
     * @param devices  the MIG devices one by one (what placement can give out); empty when the source counts
     *                 profiles only
     */
    public record Mig(String strategy, Map<String, Integer> profiles, List<MigDevice> devices) {
        public Mig {
            profiles = profiles == null ? Map.of() : profiles;
            devices = devices == null ? List.of() : devices;
        }

        /** Profiles counted, devices not known one by one (what producers before {@code devices} sent). */
        public Mig(String strategy, Map<String, Integer> profiles) {
            this(strategy, profiles, List.of());
        }
    }

    /**
     * One MIG device.
     *
     * @param id      the device's identity on the node: its UUID ({@code MIG-…}) when the source knows it (nvidia-smi,
     *                the DRA driver's {@code uuid} attribute), else a name unique on the node; a task given the device
     *                is started with it in {@code CUDA_VISIBLE_DEVICES}
     * @param gpu     the index of the GPU it is carved from (that GPU is in MIG mode)
     * @param profile its profile, {@code 1g.10gb}
     * @param device  the DRA driver's device name ({@code gpu-1-mig-1g10gb-19-0}), null from other sources
     */
    public record MigDevice(String id, int gpu, String profile, String device) {
    }

    public enum Health { READY, NOT_READY, UNKNOWN }

    public NodeInfo withHealth(Health newHealth, Instant heartbeat) {
        return new NodeInfo(name, gpuModel, gpus, nvlinkIslands, numaNodes, gpuSharing, cpuMillis, memoryMiB, topology,
                ibFabric, labels, taints, schedulable, newHealth, gpuMemoryMiB, mig, ibHcas, cordoned, heartbeat, source, simulated);
    }

    public NodeInfo withSchedulable(boolean newSchedulable, boolean newCordoned) {
        return new NodeInfo(name, gpuModel, gpus, nvlinkIslands, numaNodes, gpuSharing, cpuMillis, memoryMiB, topology,
                ibFabric, labels, taints, newSchedulable, health, gpuMemoryMiB, mig, ibHcas, newCordoned, lastHeartbeat, source, simulated);
    }

    /** This node as described by {@code newSource} ({@code AGENT}, {@code FILE}, {@code KUBERNETES}). */
    public NodeInfo withSource(String newSource) {
        return new NodeInfo(name, gpuModel, gpus, nvlinkIslands, numaNodes, gpuSharing, cpuMillis, memoryMiB, topology,
                ibFabric, labels, taints, schedulable, health, gpuMemoryMiB, mig, ibHcas, cordoned, lastHeartbeat, newSource, simulated);
    }

    /** Whether a node agent manages this node (and runs the tasks placed on it). */
    public boolean agentManaged() {
        return SOURCE_AGENT.equals(source);
    }

    public NodeInfo withLastHeartbeat(Instant heartbeat) {
        return withHealth(health, heartbeat);
    }
}
