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
 * {@code nvidia-smi topo -m}, and {@code simulated} (a node agent's declared, not real, GPUs). Omitted
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
        Boolean simulated) {

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
                gpuMemoryMiB == null ? 0 : gpuMemoryMiB, mig, hcas == null ? 0 : hcas, false, heartbeat, null,
                Boolean.TRUE.equals(simulated));
    }
}
