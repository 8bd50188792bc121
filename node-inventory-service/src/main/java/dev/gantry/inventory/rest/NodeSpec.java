package dev.gantry.inventory.rest;

import dev.gantry.contracts.nodes.NodeInfo;
import dev.gantry.contracts.validation.FieldViolation;
import dev.gantry.inventory.domain.NodeRules;
import dev.gantry.inventory.domain.NvidiaSmiTopology;
import dev.gantry.kit.problem.InvalidRequestException;
import jakarta.validation.Valid;
import jakarta.validation.constraints.Max;
import jakarta.validation.constraints.Min;
import jakarta.validation.constraints.PositiveOrZero;
import java.time.Instant;
import java.util.List;
import java.util.Map;

/**
 * A node as an agent ({@code PUT /v1/nodes/{name}}) or a cluster file describes it: the node of the
 * scenario format (FORMAT.md) plus {@code gpuMemoryMiB}, {@code mig}, {@code ibHcas} and, instead of
 * {@code nvlinkIslands}/{@code numaNodes}, optionally {@code topoMatrix}: the text of
 * {@code nvidia-smi topo -m}, and {@code simulated} (a node agent's declared, not real, GPUs). MIG devices
 * one by one go in {@code mig.devices}, or (as a scenario file's node has them) in {@code migDevices}; their
 * counts per profile are derived when {@code mig.profiles} is left out. Omitted
 * fields take the format's defaults. Read strictly: an unknown field is a 400. The node's source is the
 * inventory's to say (who called), never the description's.
 */
public record NodeSpec(
        String name,
        String gpuModel,
        @Min(0) @Max(NodeRules.MAX_GPUS) Integer gpus,
        List<List<Integer>> nvlinkIslands,
        List<List<Integer>> numaNodes,
        Boolean gpuSharing,
        @PositiveOrZero Long cpuMillis,
        @PositiveOrZero Long memoryMiB,
        @Valid NodeInfo.Topology topology,
        String ibFabric,
        @Min(0) @Max(NodeRules.MAX_HCAS) Integer ibHcas,
        @PositiveOrZero Long gpuMemoryMiB,
        NodeInfo.Mig mig,
        Map<String, String> labels,
        List<NodeInfo.Taint> taints,
        Boolean schedulable,
        String topoMatrix,
        Boolean simulated,
        List<NodeInfo.MigDevice> migDevices) {

    /**
     * The node this spec describes, named {@code name}, with the given health; problems go to
     * {@code errors} with fields prefixed by {@code prefix}. A topo matrix that does not parse is
     * malformed input: thrown at once as a 400.
     */
    public NodeInfo describe(String nodeName, String prefix, NodeInfo.Health health, Instant heartbeat, List<FieldViolation> errors) {
        if (name != null && !name.equals(nodeName)) {
            errors.add(new FieldViolation(prefix + "name", "is '" + name + "' but the path names '" + nodeName + "'"));
        }
        List<List<Integer>> islands = nvlinkIslands;
        List<List<Integer>> numa = numaNodes;
        Integer gpuCount = gpus;
        Integer hcas = ibHcas;
        if (topoMatrix != null) {
            NvidiaSmiTopology topo;
            try {
                topo = NvidiaSmiTopology.parse(topoMatrix);
            } catch (IllegalArgumentException e) {
                throw InvalidRequestException.badRequest(prefix + "topoMatrix", "does not parse as nvidia-smi topo -m: " + e.getMessage());
            }
            if (nvlinkIslands != null || numaNodes != null) {
                errors.add(new FieldViolation(prefix + "topoMatrix", "give either topoMatrix or nvlinkIslands/numaNodes, not both"));
            }
            if (gpus != null && gpus != topo.gpus()) {
                errors.add(new FieldViolation(prefix + "gpus", "is " + gpus + " but topoMatrix shows " + topo.gpus() + " GPUs"));
            }
            islands = topo.nvlinkIslands();
            numa = topo.numaNodes();
            gpuCount = topo.gpus();
            if (hcas == null && ibFabric != null) {
                hcas = topo.nics();
            }
        }
        return new NodeInfo(nodeName, gpuModel, gpuCount == null ? 0 : gpuCount, islands, numa,
                Boolean.TRUE.equals(gpuSharing), cpuMillis == null ? 0 : cpuMillis, memoryMiB == null ? 0 : memoryMiB,
                topology, ibFabric, labels, taints, schedulable == null || schedulable, health,
                gpuMemoryMiB == null ? 0 : gpuMemoryMiB, mig(prefix, errors), hcas == null ? 0 : hcas, false, heartbeat, null,
                Boolean.TRUE.equals(simulated));
    }

    /** {@code mig} with its devices from {@code migDevices} when given there, and the counts per profile derived when left out. */
    private NodeInfo.Mig mig(String prefix, List<FieldViolation> errors) {
        NodeInfo.Mig m = mig;
        if (migDevices != null && !migDevices.isEmpty()) {
            if (m != null && !m.devices().isEmpty()) {
                errors.add(new FieldViolation(prefix + "migDevices", "give MIG devices in migDevices or mig.devices, not both"));
                return m;
            }
            m = new NodeInfo.Mig(m == null ? "mixed" : m.strategy(), m == null ? null : m.profiles(), migDevices);
        }
        if (m != null && m.profiles().isEmpty() && !m.devices().isEmpty()) {
            Map<String, Integer> counted = new java.util.TreeMap<>();
            m.devices().stream().filter(d -> d != null && d.profile() != null).forEach(d -> counted.merge(d.profile(), 1, Integer::sum));
            m = new NodeInfo.Mig(m.strategy() == null ? "mixed" : m.strategy(), counted, m.devices());
        }
        return m;
    }
}
