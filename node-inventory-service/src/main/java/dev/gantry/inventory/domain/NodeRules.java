package dev.gantry.inventory.domain;

import dev.gantry.contracts.nodes.NodeInfo;
import dev.gantry.contracts.resources.MigProfile;
import dev.gantry.contracts.validation.DnsName;
import dev.gantry.contracts.validation.FieldViolation;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/** What makes a node description acceptable (the node limits of FORMAT.md, and the inventory's own fields). */
public final class NodeRules {

    public static final int MAX_GPUS = 64;
    public static final int MAX_HCAS = 64;
    public static final List<String> MIG_STRATEGIES = List.of("none", "single", "mixed");
    public static final List<String> TAINT_EFFECTS = List.of("NoSchedule", "PreferNoSchedule", "NoExecute");

    private NodeRules() {
    }

    /** MIG devices a node may have (seven per GPU on eight GPUs fit; placement keeps them in a 64-bit mask). */
    public static final int MAX_MIG_DEVICES = 64;

    private static void migDevices(List<FieldViolation> errors, String field, NodeInfo node) {
        List<NodeInfo.MigDevice> devices = node.mig().devices();
        if (devices.size() > MAX_MIG_DEVICES) {
            errors.add(new FieldViolation(field, "a node has at most " + MAX_MIG_DEVICES + " MIG devices, not " + devices.size()));
            return;
        }
        Set<String> ids = new HashSet<>();
        Map<String, Integer> counted = new java.util.TreeMap<>();
        for (int i = 0; i < devices.size(); i++) {
            NodeInfo.MigDevice d = devices.get(i);
            String p = field + "[" + i + "]";
            if (d == null) {
                errors.add(new FieldViolation(p, "is required"));
                continue;
            }
            if (d.id() == null || d.id().isBlank() || d.id().length() > 253) {
                errors.add(new FieldViolation(p + ".id", "is required (1..253 characters: the MIG device's UUID, or a name unique on the node)"));
            } else if (!ids.add(d.id())) {
                errors.add(new FieldViolation(p + ".id", "duplicate MIG device " + d.id()));
            }
            if (d.gpu() < 0 || d.gpu() >= node.gpus()) {
                errors.add(new FieldViolation(p + ".gpu", "GPU index " + d.gpu() + " is not on the node (" + node.gpus() + " GPUs)"));
            }
            if (!MigProfile.valid(d.profile())) {
                errors.add(new FieldViolation(p + ".profile", "'" + d.profile() + "' is not a MIG profile such as 1g.10gb"));
            } else {
                counted.merge(d.profile(), 1, Integer::sum);
            }
        }
        if (!devices.isEmpty() && !node.mig().profiles().isEmpty() && !counted.equals(new java.util.TreeMap<>(node.mig().profiles()))) {
            errors.add(new FieldViolation(field, "count " + counted + " per profile, but mig.profiles says " + new java.util.TreeMap<>(node.mig().profiles())));
        }
    }

    public static List<FieldViolation> violations(NodeInfo node) {
        return violations(node, "");
    }

    /** The violations of {@code node}, each field prefixed with {@code prefix} (e.g. {@code nodes[3].}). */
    public static List<FieldViolation> violations(NodeInfo node, String prefix) {
        List<FieldViolation> errors = new ArrayList<>();
        DnsName.check(errors, prefix + "name", node.name());
        if (node.gpus() < 0 || node.gpus() > MAX_GPUS) {
            errors.add(new FieldViolation(prefix + "gpus", "must be 0.." + MAX_GPUS));
        }
        if (node.gpus() > 0 && (node.gpuModel() == null || node.gpuModel().isBlank())) {
            errors.add(new FieldViolation(prefix + "gpuModel", "is required when the node has GPUs"));
        }
        if (node.cpuMillis() < 0) {
            errors.add(new FieldViolation(prefix + "cpuMillis", "must be 0 or more"));
        }
        if (node.memoryMiB() < 0) {
            errors.add(new FieldViolation(prefix + "memoryMiB", "must be 0 or more"));
        }
        if (node.gpuMemoryMiB() < 0) {
            errors.add(new FieldViolation(prefix + "gpuMemoryMiB", "must be 0 or more"));
        }
        if (node.ibHcas() < 0 || node.ibHcas() > MAX_HCAS) {
            errors.add(new FieldViolation(prefix + "ibHcas", "must be 0.." + MAX_HCAS));
        }
        if (node.ibFabric() != null && node.ibFabric().isBlank()) {
            errors.add(new FieldViolation(prefix + "ibFabric", "must not be blank (leave it out for no InfiniBand)"));
        }
        checkPartition(errors, prefix + "nvlinkIslands", node.nvlinkIslands(), node.gpus());
        checkPartition(errors, prefix + "numaNodes", node.numaNodes(), node.gpus());
        if (node.mig() != null) {
            if (!MIG_STRATEGIES.contains(node.mig().strategy())) {
                errors.add(new FieldViolation(prefix + "mig.strategy", "must be none, single or mixed"));
            }
            for (Map.Entry<String, Integer> profile : node.mig().profiles().entrySet()) {
                if (!MigProfile.valid(profile.getKey())) {
                    errors.add(new FieldViolation(prefix + "mig.profiles", "'" + profile.getKey() + "' is not a MIG profile such as 1g.10gb"));
                } else if (profile.getValue() == null || profile.getValue() < 0 || profile.getValue() > 7 * MAX_GPUS) {
                    errors.add(new FieldViolation(prefix + "mig.profiles." + profile.getKey(), "must be 0.." + 7 * MAX_GPUS));
                }
            }
            migDevices(errors, prefix + "mig.devices", node);
        }
        for (String key : node.labels().keySet()) {
            if (key == null || key.isBlank() || key.length() > 317) {
                errors.add(new FieldViolation(prefix + "labels", "label keys must be 1..317 characters"));
            }
        }
        List<NodeInfo.Taint> taints = node.taints();
        for (int i = 0; i < taints.size(); i++) {
            NodeInfo.Taint taint = taints.get(i);
            if (taint == null || taint.key() == null || taint.key().isBlank()) {
                errors.add(new FieldViolation(prefix + "taints[" + i + "].key", "is required"));
            }
            if (taint == null || !TAINT_EFFECTS.contains(taint.effect())) {
                errors.add(new FieldViolation(prefix + "taints[" + i + "].effect", "must be NoSchedule, PreferNoSchedule or NoExecute"));
            }
        }
        return errors;
    }

    /** Groups of GPU indices must be disjoint, non-empty and lie within 0..gpus-1. */
    private static void checkPartition(List<FieldViolation> errors, String field, List<List<Integer>> groups, int gpus) {
        Set<Integer> seen = new HashSet<>();
        for (int g = 0; g < groups.size(); g++) {
            List<Integer> group = groups.get(g);
            if (group == null || group.isEmpty()) {
                errors.add(new FieldViolation(field + "[" + g + "]", "must name at least one GPU"));
                continue;
            }
            for (Integer gpu : group) {
                if (gpu == null || gpu < 0 || gpu >= gpus) {
                    errors.add(new FieldViolation(field + "[" + g + "]", "GPU index " + gpu + " is not on this node (0.." + (gpus - 1) + ")"));
                } else if (!seen.add(gpu)) {
                    errors.add(new FieldViolation(field + "[" + g + "]", "GPU " + gpu + " is in more than one group"));
                }
            }
        }
    }
}
