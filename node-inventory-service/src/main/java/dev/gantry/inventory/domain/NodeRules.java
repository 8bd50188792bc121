package dev.gantry.inventory.domain;

import dev.gantry.contracts.nodes.NodeInfo;
import dev.gantry.contracts.validation.DnsName;
import dev.gantry.contracts.validation.FieldViolation;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/** What makes a node description acceptable (the node limits of FORMAT.md). */
public final class NodeRules {

    public static final int MAX_GPUS = 64;

    private NodeRules() {
    }

    public static List<FieldViolation> violations(NodeInfo node) {
        List<FieldViolation> errors = new ArrayList<>();
        DnsName.check(errors, "name", node.name());
        if (node.gpus() < 0 || node.gpus() > MAX_GPUS) {
            errors.add(new FieldViolation("gpus", "must be 0.." + MAX_GPUS));
        }
        if (node.gpus() > 0 && (node.gpuModel() == null || node.gpuModel().isBlank())) {
            errors.add(new FieldViolation("gpuModel", "is required when the node has GPUs"));
        }
        if (node.cpuMillis() < 0) {
            errors.add(new FieldViolation("cpuMillis", "must be 0 or more"));
        }
        if (node.memoryMiB() < 0) {
            errors.add(new FieldViolation("memoryMiB", "must be 0 or more"));
        }
        checkPartition(errors, "nvlinkIslands", node.nvlinkIslands(), node.gpus());
        checkPartition(errors, "numaNodes", node.numaNodes(), node.gpus());
        List<NodeInfo.Taint> taints = node.taints() == null ? List.of() : node.taints();
        for (int i = 0; i < taints.size(); i++) {
            NodeInfo.Taint taint = taints.get(i);
            if (taint.key() == null || taint.key().isBlank()) {
                errors.add(new FieldViolation("taints[" + i + "].key", "is required"));
            }
            if (!List.of("NoSchedule", "PreferNoSchedule", "NoExecute").contains(taint.effect())) {
                errors.add(new FieldViolation("taints[" + i + "].effect", "must be NoSchedule, PreferNoSchedule or NoExecute"));
            }
        }
        return errors;
    }

    /** Groups of GPU indices must be disjoint and lie within 0..gpus-1. */
    private static void checkPartition(List<FieldViolation> errors, String field, List<List<Integer>> groups, int gpus) {
        if (groups == null) {
            return;
        }
        Set<Integer> seen = new HashSet<>();
        for (int g = 0; g < groups.size(); g++) {
            for (Integer gpu : groups.get(g)) {
                if (gpu == null || gpu < 0 || gpu >= gpus) {
                    errors.add(new FieldViolation(field + "[" + g + "]", "GPU index " + gpu + " is not on this node (0.." + (gpus - 1) + ")"));
                } else if (!seen.add(gpu)) {
                    errors.add(new FieldViolation(field + "[" + g + "]", "GPU " + gpu + " is in more than one group"));
                }
            }
        }
    }
}
