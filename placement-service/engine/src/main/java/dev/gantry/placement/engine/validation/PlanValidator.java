package dev.gantry.placement.engine.validation;

import dev.gantry.placement.engine.domain.GpuTopology;
import dev.gantry.placement.engine.domain.Migration;
import dev.gantry.placement.engine.domain.NetworkLevel;
import dev.gantry.placement.engine.domain.Node;
import dev.gantry.placement.engine.domain.PendingJob;
import dev.gantry.placement.engine.domain.Placement;
import dev.gantry.placement.engine.domain.Plan;
import dev.gantry.placement.engine.domain.Queue;
import dev.gantry.placement.engine.domain.RunningJob;
import dev.gantry.placement.engine.domain.RunningTask;
import dev.gantry.placement.engine.domain.Scenario;
import dev.gantry.placement.engine.domain.Taint;
import dev.gantry.placement.engine.domain.TaskGroup;
import dev.gantry.placement.engine.domain.TaskPlacement;
import dev.gantry.placement.engine.domain.Unplaced;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * The hard rules of FORMAT.md ("What makes a plan valid") checked on any plan, with the same
 * verdicts as {@code check_plan.py}. GPU amounts are counted in thousandths so sharing adds up exactly.
 * MIG (which {@code check_plan.py} does not know): a MIG task holds MIG devices of its group's profile that its
 * node has, each at most once, and no GPU index; no task holds a GPU in MIG mode whole or shared.
 */
public final class PlanValidator {

    private PlanValidator() {
    }

    /** Every broken hard rule, one line each; empty when the plan is valid. */
    public static List<String> validate(Scenario scenario, Plan plan) {
        return new Check(scenario, plan).run();
    }

    /** Whether a pending job's task may use a node: schedulable, model, selector, taints. */
    public static String nodeMismatch(PendingJob job, Node n, boolean hasGpus) {
        if (!n.schedulable()) {
            return "node " + n.name() + " is not schedulable";
        }
        if (hasGpus && !job.gpuModels().isEmpty() && !job.gpuModels().contains(n.gpuModel())) {
            return "node " + n.name() + " has " + n.gpuModel() + ", job wants " + job.gpuModels();
        }
        for (var e : job.nodeSelector().entrySet()) {
            if (!e.getValue().equals(n.labels().get(e.getKey()))) {
                return "node " + n.name() + " lacks label " + e.getKey() + "=" + e.getValue();
            }
        }
        for (Taint t : n.taints()) {
            if (t.blocksScheduling() && job.tolerations().stream().noneMatch(x -> x.tolerates(t))) {
                return "node " + n.name() + " has taint " + t.key() + " not tolerated";
            }
        }
        return null;
    }

    /** True when all nodes share the network domain {@code level} names (FORMAT.md rule 5). */
    public static boolean networkOk(NetworkLevel level, java.util.Collection<Node> nodes) {
        if (level == null || level == NetworkLevel.ANY) {
            return true;
        }
        Set<String> names = new HashSet<>();
        nodes.forEach(n -> names.add(n.name()));
        if (names.size() <= 1) {
            return true;
        }
        if (level == NetworkLevel.NODE) {
            return false;
        }
        Set<String> keys = new HashSet<>();
        for (Node n : nodes) {
            String k = n.topology().key(level);
            if (k == null) {
                return false;
            }
            keys.add(k);
        }
        return keys.size() == 1;
    }

    /** Whether GPUs lie in one group of the topology (nvlink islands / NUMA nodes). */
    public static boolean inOneGroup(Node n, GpuTopology topology, List<Integer> gpus) {
        if (topology == GpuTopology.ANY || gpus.isEmpty()) {
            return true;
        }
        return n.groups(topology).stream().anyMatch(g -> g.containsAll(gpus));
    }

    private static final class Check {
        final Scenario sc;
        final Plan plan;
        final List<String> problems = new ArrayList<>();
        final Map<String, Node> nodes = new HashMap<>();
        final Map<String, Queue> queues = new LinkedHashMap<>();
        final Map<String, RunningJob> running = new LinkedHashMap<>();
        final Map<String, PendingJob> pending = new LinkedHashMap<>();
        final Map<String, Map<Integer, String>> used = new HashMap<>();
        final Map<String, String> migUsed = new HashMap<>();
        final Map<String, Integer> sharedMilli = new HashMap<>();
        final Map<String, Long> cpu = new HashMap<>();
        final Map<String, Long> mem = new HashMap<>();
        final Map<String, Long> before = new HashMap<>();
        final Map<String, Long> after = new HashMap<>();

        Check(Scenario sc, Plan plan) {
            this.sc = sc;
            this.plan = plan;
            sc.nodes().forEach(n -> nodes.put(n.name(), n));
            sc.queues().forEach(q -> queues.put(q.name(), q));
            sc.running().forEach(j -> running.put(j.name(), j));
            sc.pending().forEach(j -> pending.put(j.name(), j));
        }

        void bad(String msg) {
            problems.add(msg);
        }

        List<String> run() {
            Set<String> preempted = new LinkedHashSet<>();
            plan.preemptions().forEach(p -> preempted.add(p.job()));
            Map<String, Migration> migrations = new LinkedHashMap<>();
            plan.migrations().forEach(m -> migrations.put(m.job(), m));
            Map<String, Integer> seen = new LinkedHashMap<>();
            plan.placements().forEach(p -> seen.merge(p.job(), 1, Integer::sum));
            Set<String> unplaced = new LinkedHashSet<>();
            plan.unplaced().stream().map(Unplaced::job).forEach(unplaced::add);
            unplaced.forEach(u -> seen.merge(u, 1, Integer::sum));
            for (String name : pending.keySet()) {
                int c = seen.getOrDefault(name, 0);
                if (c != 1) {
                    bad("pending job " + name + " appears " + c + " times in placements+unplaced (must be 1)");
                }
            }
            for (String name : seen.keySet()) {
                if (!pending.containsKey(name)) {
                    bad("plan places or lists unknown pending job " + name);
                }
            }
            for (String name : preempted) {
                RunningJob j = running.get(name);
                if (j == null) {
                    bad("preempts unknown running job " + name);
                } else if (!j.preemptible()) {
                    bad("preempts non-preemptible job " + name);
                }
                if (migrations.containsKey(name)) {
                    bad("job " + name + " is both preempted and migrated");
                }
            }
            for (String name : migrations.keySet()) {
                RunningJob j = running.get(name);
                if (j == null) {
                    bad("migrates unknown running job " + name);
                } else if (!j.migratable()) {
                    bad("migrates non-migratable job " + name);
                }
            }
            for (RunningJob j : running.values()) {
                before.merge(j.queue(), j.gpuMilli(), Long::sum);
                if (preempted.contains(j.name())) {
                    continue;
                }
                Migration m = migrations.get(j.name());
                if (m != null) {
                    Map<String, RunningTask> old = new HashMap<>();
                    j.tasks().forEach(t -> old.put(t.name(), t));
                    List<String> newNames = new ArrayList<>(m.tasks().stream().map(TaskPlacement::task).sorted().toList());
                    if (!newNames.equals(old.keySet().stream().sorted().toList())) {
                        bad("migration of " + j.name() + " must move every task exactly once");
                    }
                    for (TaskPlacement t : m.tasks()) {
                        RunningTask o = old.get(t.task());
                        int oldCount = o == null ? 0 : o.gpus().size();
                        if (t.gpus().size() != oldCount || t.migDevices().size() != (o == null ? 0 : o.migDevices().size())) {
                            bad("migration of " + j.name() + "/" + t.task() + " changes its GPU count");
                        }
                        Node n = occupy(t.node(), t.gpus(), j.name() + "/" + t.task(), o == null ? 0 : o.cpuMillis(),
                                o == null ? 0 : o.memoryMiB(), o == null ? null : o.gpuMilli());
                        occupyMig(n, t.migDevices(), o == null ? null : o.migProfile(), j.name() + "/" + t.task());
                    }
                } else {
                    for (RunningTask t : j.tasks()) {
                        Node n = occupy(t.node(), t.gpus(), j.name() + "/" + t.name(), t.cpuMillis(), t.memoryMiB(), t.gpuMilli());
                        occupyMig(n, t.migDevices(), t.migProfile(), j.name() + "/" + t.name());
                    }
                }
                after.merge(j.queue(), j.gpuMilli(), Long::sum);
            }
            List<PendingJob> placedJobs = new ArrayList<>();
            for (Placement p : plan.placements()) {
                PendingJob j = pending.get(p.job());
                if (j == null) {
                    continue;
                }
                placement(j, p);
                placedJobs.add(j);
            }
            for (Node n : sc.nodes()) {
                long c = cpu.getOrDefault(n.name(), 0L);
                long m = mem.getOrDefault(n.name(), 0L);
                if (c > n.cpuMillis()) {
                    bad("node " + n.name() + ": CPU " + c + "m over allocatable " + n.cpuMillis() + "m");
                }
                if (m > n.memoryMiB()) {
                    bad("node " + n.name() + ": memory " + m + "MiB over allocatable " + n.memoryMiB() + "MiB");
                }
            }
            for (PendingJob j : pending.values()) {
                if (!queues.containsKey(j.queue())) {
                    bad("job " + j.name() + " names unknown queue " + j.queue());
                }
            }
            for (RunningJob j : running.values()) {
                if (!queues.containsKey(j.queue())) {
                    bad("job " + j.name() + " names unknown queue " + j.queue());
                }
            }
            for (Queue q : queues.values()) {
                if (q.capabilityGpus() == null) {
                    continue;
                }
                long a = subtree(q.name(), after);
                long b = subtree(q.name(), before);
                if (a > q.capabilityGpus() * 1000L && a > b) {
                    bad("queue " + q.name() + ": holds " + fmt(a) + " GPUs after the plan, capability " + q.capabilityGpus());
                }
            }
            for (String name : preempted) {
                RunningJob v = running.get(name);
                if (v != null && !justified(v, placedJobs)) {
                    bad("preemption of " + name + " is not justified (no higher-priority job of its queue placed, and no reclaim of borrowed GPUs)");
                }
            }
            return problems;
        }

        boolean justified(RunningJob v, List<PendingJob> placedJobs) {
            boolean sameQueueHigher = placedJobs.stream().anyMatch(p -> p.queue().equals(v.queue()) && p.priority() > v.priority());
            if (sameQueueHigher) {
                return true;
            }
            Queue q = queues.get(v.queue());
            if (q == null) {
                return false;
            }
            long g = q.guaranteeGpus() * 1000L;
            long b = before.getOrDefault(v.queue(), 0L);
            long a = after.getOrDefault(v.queue(), 0L);
            return q.reclaimable() && b > g && a >= Math.min(g, b)
                    && placedJobs.stream().anyMatch(p -> !p.queue().equals(v.queue()));
        }

        long subtree(String queue, Map<String, Long> totals) {
            long sum = totals.getOrDefault(queue, 0L);
            for (Queue c : queues.values()) {
                if (queue.equals(c.parent())) {
                    sum += subtree(c.name(), totals);
                }
            }
            return sum;
        }

        void placement(PendingJob j, Placement p) {
            Map<String, TaskGroup> groups = new HashMap<>();
            j.taskGroups().forEach(g -> groups.put(g.name(), g));
            int total = j.totalReplicas();
            List<String> names = p.tasks().stream().map(TaskPlacement::task).toList();
            if (new HashSet<>(names).size() != names.size()) {
                bad(j.name() + ": a task is placed twice");
            }
            if (p.tasks().size() < j.minAvailable() || p.tasks().size() > total) {
                bad(j.name() + ": gang places " + p.tasks().size() + " pods, needs " + j.minAvailable() + ".." + total);
            }
            Map<String, Node> nodesUsed = new LinkedHashMap<>();
            long milliPlaced = 0;
            for (TaskPlacement t : p.tasks()) {
                int dash = t.task().lastIndexOf('-');
                TaskGroup g = dash < 0 ? null : groups.get(t.task().substring(0, dash));
                String idx = dash < 0 ? "" : t.task().substring(dash + 1);
                if (g == null || idx.isEmpty() || !idx.chars().allMatch(Character::isDigit) || idx.length() > 6 || Integer.parseInt(idx) >= g.replicas()) {
                    bad(j.name() + ": task " + t.task() + " is not <taskGroup>-<index> of this job");
                    continue;
                }
                if (g.migProfile() != null) {
                    if (!t.gpus().isEmpty() || t.migDevices().size() != g.gpusPerReplica()) {
                        bad(j.name() + "/" + t.task() + ": needs " + g.gpusPerReplica() + " MIG devices " + g.migProfile() + " and no GPU, got "
                                + t.migDevices() + " and GPUs " + t.gpus());
                    }
                } else if (!t.migDevices().isEmpty()) {
                    bad(j.name() + "/" + t.task() + ": its task group asks for no MIG device, got " + t.migDevices());
                } else if (t.gpus().size() != g.gpusPerReplica() || new HashSet<>(t.gpus()).size() != t.gpus().size()) {
                    bad(j.name() + "/" + t.task() + ": needs " + g.gpusPerReplica() + " distinct GPUs, got " + t.gpus());
                }
                if (!Objects.equals(t.gpuMilli(), g.gpuMilli())) {
                    bad(j.name() + "/" + t.task() + ": gpuMilli must be " + g.gpuMilli() + ", as its task group asks");
                }
                milliPlaced += (long) t.gpus().size() * (t.gpuMilli() == null ? 1000 : t.gpuMilli());
                if (g.migProfile() != null) {
                    milliPlaced += (long) t.migDevices().size() * dev.gantry.placement.engine.domain.MigProfiles.milli(g.migProfile());
                }
                Node n = occupy(t.node(), t.gpus(), j.name() + "/" + t.task(), g.cpuMillis(), g.memoryMiB(), g.gpuMilli());
                if (n == null) {
                    continue;
                }
                occupyMig(n, t.migDevices(), g.migProfile(), j.name() + "/" + t.task());
                nodesUsed.put(n.name(), n);
                String mismatch = nodeMismatch(j, n, !t.gpus().isEmpty() || !t.migDevices().isEmpty());
                if (mismatch != null) {
                    bad(j.name() + "/" + t.task() + ": " + mismatch);
                }
                if (!inOneGroup(n, j.gpuTopology(), t.gpus())) {
                    bad(j.name() + "/" + t.task() + ": GPUs " + t.gpus() + " on " + n.name() + " are not in one "
                            + j.gpuTopology().jsonName() + " group " + n.groups(j.gpuTopology()));
                }
            }
            if (!networkOk(j.network().required(), nodesUsed.values())) {
                bad(j.name() + ": network.required=" + j.network().required().jsonName() + " broken by nodes " + nodesUsed.keySet());
            }
            if (j.requireInfiniBand() && nodesUsed.size() > 1) {
                Set<String> fabrics = new HashSet<>();
                nodesUsed.values().forEach(n -> fabrics.add(n.ibFabric()));
                if (fabrics.size() != 1 || fabrics.contains(null)) {
                    bad(j.name() + ": requireInfiniBand but nodes span fabrics " + fabrics);
                }
            }
            after.merge(j.queue(), milliPlaced, Long::sum);
        }

        Node occupy(String nodeName, List<Integer> gpus, String owner, long cpuM, long memM, Integer milli) {
            Node n = nodes.get(nodeName);
            if (n == null) {
                bad(owner + ": unknown node " + nodeName);
                return null;
            }
            if (milli != null && !n.gpuSharing()) {
                bad(owner + ": node " + nodeName + " does not allow GPU sharing");
            }
            Map<Integer, String> u = used.computeIfAbsent(nodeName, k -> new HashMap<>());
            long migMode = n.migGpuMask();
            for (int g : gpus) {
                if (g < 0 || g >= n.gpus()) {
                    bad(owner + ": GPU index " + g + " not on node " + nodeName + " (" + n.gpus() + " GPUs)");
                    continue;
                }
                if ((migMode & (1L << g)) != 0) {
                    bad(owner + ": GPU " + nodeName + "/" + g + " is in MIG mode: only its MIG devices can be given out");
                }
                String key = nodeName + "/" + g;
                int shared = sharedMilli.getOrDefault(key, 0);
                if (milli == null) {
                    if (u.containsKey(g) || shared > 0) {
                        bad(owner + ": GPU " + key + " already used by " + u.getOrDefault(g, "sharing tasks"));
                    }
                    u.put(g, owner);
                } else {
                    if (u.containsKey(g) && shared == 0) {
                        bad(owner + ": GPU " + key + " is held whole by " + u.get(g));
                    }
                    int sum = shared + milli;
                    sharedMilli.put(key, sum);
                    if (sum > 1000) {
                        bad(owner + ": GPU " + key + " shared beyond 1000 milli (" + sum + ")");
                    }
                    u.putIfAbsent(g, owner);
                }
            }
            cpu.merge(nodeName, cpuM, Long::sum);
            mem.merge(nodeName, memM, Long::sum);
            return n;
        }

        /** MIG devices held by {@code owner} on node {@code n} (null: reported already): on the node, of the profile, once. */
        void occupyMig(Node n, List<String> ids, String profile, String owner) {
            if (n == null || ids.isEmpty()) {
                return;
            }
            for (String id : ids) {
                dev.gantry.placement.engine.domain.MigDevice d = n.migDevices().stream().filter(x -> x.id().equals(id)).findFirst().orElse(null);
                if (d == null) {
                    bad(owner + ": MIG device " + id + " is not on node " + n.name());
                    continue;
                }
                if (profile != null && !profile.equals(d.profile())) {
                    bad(owner + ": MIG device " + id + " on " + n.name() + " is " + d.profile() + ", not " + profile);
                }
                String prev = migUsed.putIfAbsent(n.name() + "/" + id, owner);
                if (prev != null) {
                    bad(owner + ": MIG device " + n.name() + "/" + id + " already used by " + prev);
                }
            }
        }
    }

    static String fmt(long milli) {
        return milli % 1000 == 0 ? Long.toString(milli / 1000) : Double.toString(milli / 1000.0);
    }
}
