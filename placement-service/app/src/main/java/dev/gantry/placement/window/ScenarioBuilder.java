package dev.gantry.placement.window;

import dev.gantry.contracts.jobs.JobQueued;
import dev.gantry.contracts.nodes.NodeInfo;
import dev.gantry.contracts.quota.QuotaShares;
import dev.gantry.placement.engine.domain.GpuTopology;
import dev.gantry.placement.engine.domain.MigDevice;
import dev.gantry.placement.engine.domain.Network;
import dev.gantry.placement.engine.domain.NetworkLevel;
import dev.gantry.placement.engine.domain.Node;
import dev.gantry.placement.engine.domain.PendingJob;
import dev.gantry.placement.engine.domain.Queue;
import dev.gantry.placement.engine.domain.RunningJob;
import dev.gantry.placement.engine.domain.RunningTask;
import dev.gantry.placement.engine.domain.Scenario;
import dev.gantry.placement.engine.domain.Taint;
import dev.gantry.placement.engine.domain.TaskGroup;
import dev.gantry.placement.engine.domain.Toleration;
import dev.gantry.placement.engine.domain.Topology;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;

/**
 * Turns what placement holds into one immutable engine scenario. Plain Java, no I/O. Engine job
 * names are the job ids (unique, DNS-safe); queues come from the latest quota shares, and any other
 * queue name seen is an unbounded root queue. A running job is migratable when its spec asks and
 * the {@link DisruptionBudget} marked it movable; a job being moved is pinned and holds both its old
 * GPUs and the ones it goes to (tasks named {@code <task>-move-target}).
 */
public final class ScenarioBuilder {

    /** A pending job as stored: its id and the {@code jobs.queued} payload. */
    public record Waiting(UUID jobId, JobQueued spec) {
    }

    /** One allocation row; {@code migDevices} (of {@code migProfile}) for a task on MIG devices. */
    public record Held(UUID jobId, String task, String node, List<Integer> gpus, Integer gpuMilli, long cpuMillis, long memoryMiB,
            String migProfile, List<String> migDevices) {
        public Held {
            migDevices = migDevices == null ? List.of() : List.copyOf(migDevices);
        }

        /** On whole or shared GPUs. */
        public Held(UUID jobId, String task, String node, List<Integer> gpus, Integer gpuMilli, long cpuMillis, long memoryMiB) {
            this(jobId, task, node, gpus, gpuMilli, cpuMillis, memoryMiB, null, List.of());
        }
    }

    /**
     * A placed job: its spec (null when unknown, e.g. an allocation written by hand), when it was
     * bound, and until when it is protected from preemption (placed again after being preempted;
     * null when not protected).
     */
    public record Placed(UUID jobId, String queue, JobQueued spec, Instant boundAt, Instant protectedUntil, Instant lastMigratedAt,
            List<Held> moveTargets, boolean movable) {

        public Placed {
            moveTargets = moveTargets == null ? List.of() : List.copyOf(moveTargets);
        }

        public Placed(UUID jobId, String queue, JobQueued spec, Instant boundAt, Instant protectedUntil) {
            this(jobId, queue, spec, boundAt, protectedUntil, null, List.of(), false);
        }

        public Placed(UUID jobId, String queue, JobQueued spec, Instant boundAt) {
            this(jobId, queue, spec, boundAt, null);
        }

        /** The same job, offered to the solver as movable or not (the {@link DisruptionBudget} decides). */
        public Placed withMovable(boolean allowed) {
            return new Placed(jobId, queue, spec, boundAt, protectedUntil, lastMigratedAt, moveTargets, allowed);
        }

        /** Being migrated: it holds its old GPUs and its new ones until the move is finished. */
        public boolean moving() {
            return !moveTargets.isEmpty();
        }

        /** Whether the engine may choose it as a victim at {@code now}. */
        boolean preemptibleAt(Instant now) {
            return spec != null && spec.preemptible() && !moving() && (protectedUntil == null || !protectedUntil.isAfter(now));
        }

        /**
         * Whether the engine may move it: allowed by the budget, asked for by its spec, not moving already. A job on
         * MIG devices moves to free devices of its profile ({@code MoveTargets} keep them).
         */
        boolean migratable() {
            return movable && spec != null && spec.migratable() && spec.checkpointable() && !moving();
        }
    }

    /** Task-name suffix of the GPUs a moving job is going to (task names are unique within a job). */
    static final String MOVE_TARGET_SUFFIX = "-move-target";

    private ScenarioBuilder() {
    }

    public static Scenario build(Instant now, List<NodeInfo> nodeInfos, List<Placed> placed, List<Held> held, List<Waiting> waiting) {
        return build(now, nodeInfos, placed, held, waiting, List.of());
    }

    /**
     * With {@code shares} (the latest {@code quota.shares}, may be empty): their queues (tree,
     * weight, guarantee, capability, reclaimable); a queue name seen but not in them is an
     * unbounded root queue.
     */
    public static Scenario build(Instant now, List<NodeInfo> nodeInfos, List<Placed> placed, List<Held> held, List<Waiting> waiting,
            List<QuotaShares.QueueShare> shares) {
        List<Node> nodes = nodeInfos.stream().map(ScenarioBuilder::node).toList();
        Set<String> nodeNames = new HashSet<>();
        nodes.forEach(n -> nodeNames.add(n.name()));
        Set<String> queues = new LinkedHashSet<>();

        Map<UUID, Placed> placedById = new LinkedHashMap<>();
        placed.forEach(p -> placedById.put(p.jobId(), p));
        Map<UUID, List<RunningTask>> tasksByJob = new LinkedHashMap<>();
        Set<UUID> onUnknownNode = new HashSet<>();
        List<Held> all = new ArrayList<>(held);
        for (Placed p : placed) {
            // GPUs a moving job goes to are held for it until the move is done: named apart from its running tasks
            p.moveTargets().forEach(t -> all.add(new Held(p.jobId(), t.task() + MOVE_TARGET_SUFFIX, t.node(), t.gpus(), t.gpuMilli(),
                    t.cpuMillis(), t.memoryMiB(), t.migProfile(), t.migDevices())));
        }
        for (Held h : all) {
            if (!nodeNames.contains(h.node())) {
                onUnknownNode.add(h.jobId());
                continue;
            }
            tasksByJob.computeIfAbsent(h.jobId(), k -> new ArrayList<>())
                    .add(new RunningTask(h.task(), h.node(), h.gpus(), h.cpuMillis(), h.memoryMiB(), h.gpuMilli(),
                            h.migDevices().isEmpty() ? null : h.migProfile(), h.migDevices()));
        }
        List<RunningJob> running = new ArrayList<>();
        tasksByJob.forEach((jobId, tasks) -> {
            if (onUnknownNode.contains(jobId)) {
                return; // a job on a node placement no longer knows is left out whole (its other GPUs stay pinned below)
            }
            Placed p = placedById.get(jobId);
            JobQueued spec = p == null ? null : p.spec();
            String queue = p == null ? "default" : p.queue();
            queues.add(queue);
            // a job placed again after a preemption is not a victim until its protection ends (no thrashing)
            running.add(new RunningJob(jobId.toString(), queue, spec == null ? 0 : spec.priority(),
                    p != null && p.preemptibleAt(now), spec != null && spec.checkpointable(), p != null && p.migratable(),
                    p == null ? now.getEpochSecond() : p.boundAt().getEpochSecond(), tasks,
                    // where a move may take it: the nodes it may run on at all
                    spec == null || spec.nodeSelector() == null ? Map.of() : spec.nodeSelector(), tolerations(spec)));
        });
        // GPUs of a job left out above still must not be given away: keep them as a pinned job of their own
        for (UUID jobId : onUnknownNode) {
            List<RunningTask> tasks = tasksByJob.get(jobId);
            if (tasks != null && !tasks.isEmpty()) {
                queues.add("default");
                running.add(new RunningJob(jobId.toString(), "default", 0, false, false, false, now.getEpochSecond(), tasks));
            }
        }

        List<PendingJob> pending = new ArrayList<>();
        for (Waiting w : waiting) {
            pending.add(pending(w.jobId(), w.spec()));
            queues.add(w.spec().queue());
        }
        Map<String, QuotaShares.QueueShare> shareByName = new LinkedHashMap<>();
        for (QuotaShares.QueueShare q : shares) {
            if (q != null && q.name() != null) {
                shareByName.put(q.name(), q);
            }
        }
        List<Queue> queueList = new ArrayList<>();
        shareByName.values().forEach(q -> queueList.add(new Queue(q.name(), Math.max(1, q.weight()), Math.max(0, q.guaranteeGpus()),
                q.capabilityGpus(), q.reclaimable(), q.parent() != null && shareByName.containsKey(q.parent()) ? q.parent() : null)));
        queues.stream().filter(q -> !shareByName.containsKey(q)).sorted()
                .forEach(q -> queueList.add(new Queue(q, 1.0, 0, null, true, null)));
        return new Scenario(Scenario.FORMAT, "window-" + now.toEpochMilli(), now.getEpochSecond(), nodes, queueList, running, pending);
    }

    private static List<Toleration> tolerations(JobQueued j) {
        return j == null || j.tolerations() == null ? List.of() : j.tolerations().stream().map(t -> new Toleration(t.key(), t.value())).toList();
    }

    /** A pending job in engine terms; throws IllegalArgumentException for a value the engine does not know. */
    public static PendingJob pending(UUID jobId, JobQueued j) {
        List<TaskGroup> groups = j.taskGroups().stream()
                .map(g -> new TaskGroup(g.name(), g.replicas(), g.gpusPerReplica(), g.cpuMillis(), g.memoryMiB(), g.gpuMilli(), g.migProfile()))
                .toList();
        int replicas = groups.stream().mapToInt(TaskGroup::replicas).sum();
        Network network = j.network() == null ? Network.ANY
                : new Network(j.network().required() == null ? NetworkLevel.ANY : NetworkLevel.parse(j.network().required()),
                        j.network().preferred() == null ? null : NetworkLevel.parse(j.network().preferred()));
        List<Toleration> tolerations = tolerations(j);
        return new PendingJob(jobId.toString(), j.queue(), j.priority(),
                j.submittedAt() == null ? 0 : j.submittedAt().getEpochSecond(), groups,
                j.minAvailable() == null ? replicas : j.minAvailable(), j.gpuModels(),
                j.gpuTopology() == null ? GpuTopology.ANY : GpuTopology.parse(j.gpuTopology()), network,
                j.requireInfiniBand(), j.nodeSelector(), tolerations, j.preemptible(), j.checkpointable(),
                j.estimatedRuntimeSeconds());
    }

    /** A node in engine terms: GPUs in no NVLink island are islands of their own; 0 CPU/memory means unknown (unbounded). */
    public static Node node(NodeInfo n) {
        List<List<Integer>> islands = null;
        if (!n.nvlinkIslands().isEmpty()) {
            islands = new ArrayList<>(n.nvlinkIslands());
            Set<Integer> covered = new TreeSet<>();
            n.nvlinkIslands().forEach(covered::addAll);
            for (int g = 0; g < n.gpus(); g++) {
                if (!covered.contains(g)) {
                    islands.add(List.of(g));
                }
            }
        }
        NodeInfo.Topology t = n.topology();
        List<Taint> taints = n.taints().stream().map(x -> new Taint(x.key(), x.value(), x.effect())).toList();
        boolean schedulable = n.schedulable() && n.health() != NodeInfo.Health.NOT_READY;
        List<MigDevice> migs = n.mig() == null ? List.of()
                : n.mig().devices().stream().map(d -> new MigDevice(d.id(), d.gpu(), d.profile())).toList();
        return new Node(n.name(), n.gpuModel(), n.gpus(), islands, n.numaNodes(),
                n.cpuMillis() > 0 ? n.cpuMillis() : Long.MAX_VALUE, n.memoryMiB() > 0 ? n.memoryMiB() : Long.MAX_VALUE,
                new Topology(t.zone(), t.spine(), t.leaf()), n.ibFabric(), n.labels(), taints, schedulable, n.gpuSharing(), migs);
    }
}
