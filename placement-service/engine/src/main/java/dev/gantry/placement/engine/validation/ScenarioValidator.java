package dev.gantry.placement.engine.validation;

import dev.gantry.placement.engine.domain.GpuTopology;
import dev.gantry.placement.engine.domain.MigDevice;
import dev.gantry.placement.engine.domain.MigProfiles;
import dev.gantry.placement.engine.domain.Node;
import dev.gantry.placement.engine.domain.PendingJob;
import dev.gantry.placement.engine.domain.Queue;
import dev.gantry.placement.engine.domain.RunningJob;
import dev.gantry.placement.engine.domain.RunningTask;
import dev.gantry.placement.engine.domain.Scenario;
import dev.gantry.placement.engine.domain.TaskGroup;
import dev.gantry.placement.engine.json.Violation;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * The limits and cross references of FORMAT.md that a typed parse cannot see: names, uniqueness,
 * island partitions, queue references and cycles, gang sizes, and the running state (GPUs that
 * exist, no GPU held twice, sharing within 1000 milli, CPU and memory within allocatable), and MIG (devices on GPUs
 * of the node, ids unique on it, profiles spelled as NVIDIA spells them; a MIG task holds devices of its profile).
 * Every violation names its field, e.g. {@code pending[3].taskGroups[0].gpusPerReplica: must be 0..64}.
 */
public final class ScenarioValidator {
    /** Kubernetes DNS subdomain, as FORMAT.md limits names. */
    private static final Pattern DNS_SUBDOMAIN = Pattern.compile("[a-z0-9]([-a-z0-9.]*[a-z0-9])?");
    public static final int MAX_PODS_PER_JOB = 10_000;

    private ScenarioValidator() {
    }

    public static List<Violation> validate(Scenario s) {
        List<Violation> out = new ArrayList<>();
        Map<String, Node> nodes = new HashMap<>();
        for (int i = 0; i < s.nodes().size(); i++) {
            Node n = s.nodes().get(i);
            String p = "nodes[" + i + "]";
            if (name(out, p + ".name", n.name()) && nodes.putIfAbsent(n.name(), n) != null) {
                out.add(new Violation(p + ".name", "duplicate node name " + n.name()));
            }
            partition(out, p + ".nvlinkIslands", n.nvlinkIslands(), n.gpus());
            partition(out, p + ".numaNodes", n.numaNodes(), n.gpus());
            migDevices(out, p + ".migDevices", n);
        }
        Map<String, Queue> queues = new HashMap<>();
        for (int i = 0; i < s.queues().size(); i++) {
            Queue q = s.queues().get(i);
            String p = "queues[" + i + "]";
            if (name(out, p + ".name", q.name()) && queues.putIfAbsent(q.name(), q) != null) {
                out.add(new Violation(p + ".name", "duplicate queue name " + q.name()));
            }
        }
        for (int i = 0; i < s.queues().size(); i++) {
            Queue q = s.queues().get(i);
            if (q.parent() == null) {
                continue;
            }
            if (!queues.containsKey(q.parent())) {
                out.add(new Violation("queues[" + i + "].parent", "unknown queue " + q.parent()));
            } else if (cyclic(q, queues)) {
                out.add(new Violation("queues[" + i + "].parent", "queue hierarchy has a cycle through " + q.name()));
            }
        }
        Set<String> jobNames = new HashSet<>();
        for (int i = 0; i < s.running().size(); i++) {
            RunningJob j = s.running().get(i);
            String p = "running[" + i + "]";
            job(out, p, j.name(), j.queue(), jobNames, queues);
            if (j.tasks().isEmpty()) {
                out.add(new Violation(p + ".tasks", "must hold at least one task"));
            }
            Set<String> taskNames = new HashSet<>();
            for (int t = 0; t < j.tasks().size(); t++) {
                RunningTask task = j.tasks().get(t);
                String tp = p + ".tasks[" + t + "]";
                if (task.name() == null || task.name().isBlank()) {
                    out.add(new Violation(tp + ".name", "is required"));
                } else if (!taskNames.add(task.name())) {
                    out.add(new Violation(tp + ".name", "duplicate task name " + task.name() + " in job " + j.name()));
                }
                if (task.node() != null && !nodes.containsKey(task.node())) {
                    out.add(new Violation(tp + ".node", "unknown node " + task.node()));
                }
                if (task.gpuMilli() != null && task.gpus().size() != 1) {
                    out.add(new Violation(tp + ".gpus", "a sharing task (gpuMilli) holds exactly one GPU"));
                }
                if (task.migProfile() != null && !MigProfiles.valid(task.migProfile())) {
                    out.add(new Violation(tp + ".migProfile", "must be a MIG profile such as 1g.10gb, got \"" + task.migProfile() + "\""));
                }
                if (!task.migDevices().isEmpty() && (task.migProfile() == null || !task.gpus().isEmpty() || task.gpuMilli() != null)) {
                    out.add(new Violation(tp + ".migDevices", "a MIG task names its migProfile and holds no GPU index or share"));
                }
            }
        }
        for (int i = 0; i < s.pending().size(); i++) {
            PendingJob j = s.pending().get(i);
            String p = "pending[" + i + "]";
            job(out, p, j.name(), j.queue(), jobNames, queues);
            if (j.taskGroups().isEmpty()) {
                out.add(new Violation(p + ".taskGroups", "must hold at least one task group"));
            }
            Set<String> groupNames = new HashSet<>();
            for (int g = 0; g < j.taskGroups().size(); g++) {
                TaskGroup tg = j.taskGroups().get(g);
                String gp = p + ".taskGroups[" + g + "]";
                if (name(out, gp + ".name", tg.name()) && !groupNames.add(tg.name())) {
                    out.add(new Violation(gp + ".name", "duplicate task group name " + tg.name() + " in job " + j.name()));
                }
                if (tg.gpuMilli() != null && tg.gpusPerReplica() != 1) {
                    out.add(new Violation(gp + ".gpusPerReplica", "must be 1 when gpuMilli is given"));
                }
                if (tg.migProfile() != null) {
                    if (!MigProfiles.valid(tg.migProfile())) {
                        out.add(new Violation(gp + ".migProfile", "must be a MIG profile such as 1g.10gb or 3g.40gb, got \"" + tg.migProfile() + "\""));
                    } else if (tg.gpuMilli() != null) {
                        out.add(new Violation(gp + ".migProfile", "a task group asks for MIG devices or a share of a GPU (gpuMilli), not both"));
                    } else if (tg.gpusPerReplica() < 1) {
                        out.add(new Violation(gp + ".gpusPerReplica", "must be 1.." + MAX_MIG_PER_NODE + " (MIG devices per replica) when migProfile is given"));
                    } else if (j.gpuTopology() != GpuTopology.ANY) {
                        out.add(new Violation(gp + ".migProfile", "MIG devices have no NVLink island or NUMA placement: gpuTopology must be any"));
                    }
                }
            }
            int total = j.totalReplicas();
            if (total > MAX_PODS_PER_JOB) {
                out.add(new Violation(p + ".taskGroups", "a job has at most 10000 pods, this one " + total));
            }
            if (j.minAvailable() > total) {
                out.add(new Violation(p + ".minAvailable", "must be 1.." + total + " (the job's replicas)"));
            }
        }
        if (out.isEmpty()) {
            runningState(out, s, nodes);
        }
        return out;
    }

    private static void job(List<Violation> out, String p, String name, String queue, Set<String> jobNames, Map<String, Queue> queues) {
        if (name(out, p + ".name", name) && !jobNames.add(name)) {
            out.add(new Violation(p + ".name", "duplicate job name " + name));
        }
        if (queue != null && !queues.containsKey(queue)) {
            out.add(new Violation(p + ".queue", "unknown queue " + queue));
        }
    }

    private static boolean name(List<Violation> out, String field, String name) {
        if (name == null) {
            return false; // the parser already reported it as required
        }
        if (name.length() > 253 || !DNS_SUBDOMAIN.matcher(name).matches()) {
            out.add(new Violation(field, "must be a DNS subdomain name (lowercase [a-z0-9]([-a-z0-9.]*[a-z0-9])?, at most 253 characters), got \"" + name + "\""));
            return false;
        }
        return true;
    }

    private static void partition(List<Violation> out, String field, List<List<Integer>> groups, int gpus) {
        Set<Integer> seen = new HashSet<>();
        for (int g = 0; g < groups.size(); g++) {
            for (int idx : groups.get(g)) {
                if (idx >= gpus) {
                    out.add(new Violation(field + "[" + g + "]", "GPU index " + idx + " is not on the node (" + gpus + " GPUs)"));
                } else if (!seen.add(idx)) {
                    out.add(new Violation(field + "[" + g + "]", "GPU index " + idx + " is in more than one group (groups must not overlap)"));
                }
            }
        }
    }

    /** MIG devices a node may have at most (seven per GPU on eight GPUs fit). */
    public static final int MAX_MIG_PER_NODE = 64;

    private static void migDevices(List<Violation> out, String field, Node n) {
        if (n.migDevices().size() > MAX_MIG_PER_NODE) {
            out.add(new Violation(field, "a node has at most " + MAX_MIG_PER_NODE + " MIG devices, this one " + n.migDevices().size()));
            return;
        }
        Set<String> ids = new HashSet<>();
        for (int k = 0; k < n.migDevices().size(); k++) {
            MigDevice d = n.migDevices().get(k);
            String p = field + "[" + k + "]";
            if (d.id() == null || d.id().isBlank()) {
                out.add(new Violation(p + ".id", "is required"));
            } else if (!ids.add(d.id())) {
                out.add(new Violation(p + ".id", "duplicate MIG device " + d.id() + " on node " + n.name()));
            }
            if (d.gpu() < 0 || d.gpu() >= n.gpus()) {
                out.add(new Violation(p + ".gpu", "GPU index " + d.gpu() + " is not on the node (" + n.gpus() + " GPUs)"));
            }
            if (!MigProfiles.valid(d.profile())) {
                out.add(new Violation(p + ".profile", "must be a MIG profile such as 1g.10gb, got \"" + d.profile() + "\""));
            }
        }
    }

    private static boolean cyclic(Queue q, Map<String, Queue> queues) {
        Set<String> seen = new HashSet<>();
        Queue cur = q;
        while (cur != null && cur.parent() != null) {
            if (!seen.add(cur.name())) {
                return true;
            }
            cur = queues.get(cur.parent());
        }
        return false;
    }

    /** The running jobs must form a state the checker accepts when every one of them stays. */
    private static void runningState(List<Violation> out, Scenario s, Map<String, Node> nodes) {
        Map<String, String> wholeOwner = new HashMap<>();
        Map<String, String> migOwner = new HashMap<>();
        Map<String, Integer> sharedMilli = new HashMap<>();
        Map<String, long[]> used = new HashMap<>();
        for (int i = 0; i < s.running().size(); i++) {
            RunningJob j = s.running().get(i);
            for (int t = 0; t < j.tasks().size(); t++) {
                RunningTask task = j.tasks().get(t);
                String tp = "running[" + i + "].tasks[" + t + "]";
                Node n = nodes.get(task.node());
                if (task.gpuMilli() != null && !n.gpuSharing()) {
                    out.add(new Violation(tp + ".gpuMilli", "node " + n.name() + " does not allow GPU sharing"));
                }
                for (String id : task.migDevices()) {
                    MigDevice d = n.migDevices().stream().filter(x -> x.id().equals(id)).findFirst().orElse(null);
                    if (d == null) {
                        out.add(new Violation(tp + ".migDevices", "MIG device " + id + " is not on node " + n.name()));
                    } else if (!d.profile().equals(task.migProfile())) {
                        out.add(new Violation(tp + ".migDevices", "MIG device " + id + " on " + n.name() + " is " + d.profile() + ", not " + task.migProfile()));
                    }
                    String prev = migOwner.putIfAbsent(n.name() + "/" + id, j.name() + "/" + task.name());
                    if (prev != null) {
                        out.add(new Violation(tp + ".migDevices", "MIG device " + n.name() + "/" + id + " is already held by " + prev));
                    }
                }
                long migMode = n.migGpuMask();
                Set<Integer> own = new HashSet<>();
                for (int g : task.gpus()) {
                    String key = n.name() + "/" + g;
                    if (g < n.gpus() && g < 64 && (migMode & (1L << g)) != 0) {
                        out.add(new Violation(tp + ".gpus", "GPU " + key + " is in MIG mode: a task holds its MIG devices, not the GPU"));
                    }
                    if (g >= n.gpus()) {
                        out.add(new Violation(tp + ".gpus", "GPU index " + g + " is not on node " + n.name() + " (" + n.gpus() + " GPUs)"));
                    } else if (!own.add(g)) {
                        out.add(new Violation(tp + ".gpus", "GPU index " + g + " listed twice"));
                    } else if (task.gpuMilli() == null) {
                        String prev = wholeOwner.putIfAbsent(key, j.name() + "/" + task.name());
                        if (prev != null || sharedMilli.containsKey(key)) {
                            out.add(new Violation(tp + ".gpus", "GPU " + key + " is already held by " + (prev != null ? prev : "sharing tasks")));
                        }
                    } else {
                        if (wholeOwner.containsKey(key)) {
                            out.add(new Violation(tp + ".gpus", "GPU " + key + " is held whole by " + wholeOwner.get(key)));
                        }
                        int sum = sharedMilli.merge(key, task.gpuMilli(), Integer::sum);
                        if (sum > 1000) {
                            out.add(new Violation(tp + ".gpuMilli", "GPU " + key + " shared beyond 1000 milli (" + sum + ")"));
                        }
                    }
                }
                long[] u = used.computeIfAbsent(n.name(), k -> new long[2]);
                u[0] += task.cpuMillis();
                u[1] += task.memoryMiB();
            }
        }
        for (int i = 0; i < s.nodes().size(); i++) {
            Node n = s.nodes().get(i);
            long[] u = used.get(n.name());
            if (u == null) {
                continue;
            }
            if (u[0] > n.cpuMillis()) {
                out.add(new Violation("nodes[" + i + "].cpuMillis", "running tasks use " + u[0] + "m, more than allocatable " + n.cpuMillis() + "m"));
            }
            if (u[1] > n.memoryMiB()) {
                out.add(new Violation("nodes[" + i + "].memoryMiB", "running tasks use " + u[1] + " MiB, more than allocatable " + n.memoryMiB() + " MiB"));
            }
        }
    }
}
