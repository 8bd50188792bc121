package dev.gantry.placement.agent;

import dev.gantry.contracts.events.EventCodec;
import dev.gantry.contracts.jobs.JobQueued;
import dev.gantry.contracts.nodes.NodeInfo;
import dev.gantry.placement.persistence.AgentTask;
import dev.gantry.placement.persistence.Allocation;
import dev.gantry.placement.persistence.NodeRecord;
import dev.gantry.placement.persistence.RunningJobRecord;
import io.quarkus.hibernate.reactive.panache.Panache;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.stream.Collectors;

/**
 * What a node agent must run: derived on every read from the allocation and running-job rows (and
 * the tasks' reports), never kept in memory, so neither a restarted agent nor a restarted placement
 * service loses anything. A task of a job being preempted is marked {@code stop} with the grace
 * left; a job that ended (completed, failed, cancelled, requeued) simply has no assignment any more,
 * which tells the agent to stop whatever of it still runs.
 */
@ApplicationScoped
public class AgentAssignments {

    /** The label a node agent registers with the address its peers reach it at ({@code MASTER_ADDR}). */
    public static final String ADDRESS_LABEL = "gantry.dev/address";

    /**
     * One task for the agent of {@code node}; {@code migDevices}: the MIG devices it holds (ids: the MIG UUIDs the agent
     * reported), which it is started on instead of GPU indices; left out of the JSON when none.
     */
    public record Assignment(UUID jobId, String jobName, long attempt, String task, String taskGroup, List<String> command,
            List<Integer> gpus, Integer gpuMilli, long cpuMillis, long memoryMiB, int rank, int worldSize, int localRank,
            int localWorldSize, int nodeRank, int nodes, String masterAddr, int masterPort, boolean checkpointable,
            Integer checkpointGraceSeconds, boolean stop, long stopGraceSeconds, String reported, Integer exitCode, String image,
            String workingDir, Map<String, String> env,
            @com.fasterxml.jackson.annotation.JsonInclude(com.fasterxml.jackson.annotation.JsonInclude.Include.NON_EMPTY)
            List<String> migDevices) {
    }

    /** The node's assignments and a fingerprint of them: a long poll answers when it changes. */
    public record Assignments(String node, String version, List<Assignment> assignments) {
    }

    /** The assignments of {@code node} as the database has them now. */
    public Uni<Assignments> read(String node) {
        return Panache.withSession(() -> Allocation.<Allocation>list("node", node).chain(onNode -> {
            Set<UUID> jobs = onNode.stream().map(a -> a.jobId).collect(Collectors.toSet());
            if (jobs.isEmpty()) {
                return Uni.createFrom().item(build(node, List.of(), List.of(), List.of(), List.of(), List.of()));
            }
            return RunningJobRecord.<RunningJobRecord>list("jobId in ?1", jobs)
                    .chain(running -> Allocation.<Allocation>list("jobId in ?1", jobs)
                            .chain(all -> NodeRecord.<NodeRecord>list("name in ?1",
                                            all.stream().map(a -> a.node).collect(Collectors.toSet()))
                                    .chain(nodes -> AgentTask.<AgentTask>list("jobId in ?1", jobs)
                                            .map(reports -> build(node, onNode, running, all, nodes, reports)))));
        }));
    }

    static Assignments build(String node, List<Allocation> onNode, List<RunningJobRecord> running, List<Allocation> all,
            List<NodeRecord> nodes, List<AgentTask> reports) {
        Map<UUID, RunningJobRecord> jobs = running.stream().collect(Collectors.toMap(r -> r.jobId, r -> r));
        Map<String, NodeRecord> nodeRows = nodes.stream().collect(Collectors.toMap(n -> n.name, n -> n));
        Map<UUID, List<Allocation>> byJob = new HashMap<>();
        all.forEach(a -> byJob.computeIfAbsent(a.jobId, k -> new ArrayList<>()).add(a));
        Instant now = Instant.now();
        List<Assignment> out = new ArrayList<>();
        for (Allocation mine : onNode) {
            RunningJobRecord job = jobs.get(mine.jobId);
            if (job == null) {
                continue; // released between the two reads
            }
            long attempt = attemptOf(job);
            JobQueued spec = EventCodec.fromJson(job.spec, JobQueued.class);
            List<Allocation> gang = new ArrayList<>(byJob.getOrDefault(mine.jobId, List.of()));
            gang.sort(taskOrder(spec));
            Map<String, Integer> nodeRanks = new LinkedHashMap<>();
            gang.forEach(a -> nodeRanks.putIfAbsent(a.node, nodeRanks.size()));
            List<Allocation> local = gang.stream().filter(a -> a.node.equals(mine.node)).toList();
            Allocation first = gang.getFirst();
            JobQueued.TaskGroup group = groupOf(spec, mine.task);
            AgentTask report = reports.stream()
                    .filter(r -> r.jobId.equals(mine.jobId) && r.attempt == attempt && r.task.equals(mine.task))
                    .findFirst().orElse(null);
            boolean stop = job.evictingUntil != null;
            long grace = stop ? Math.max(0, Duration.between(now, job.evictingUntil).toSeconds()) : 0;
            out.add(new Assignment(mine.jobId, spec.name(), attempt, mine.task, group == null ? null : group.name(),
                    group == null || group.command() == null ? List.of() : group.command(),
                    java.util.Arrays.stream(mine.gpuIndices).boxed().toList(), mine.gpuMilli, mine.cpuMillis, mine.memoryMiB,
                    gang.indexOf(mine), gang.size(), local.indexOf(mine), local.size(), nodeRanks.get(mine.node), nodeRanks.size(),
                    addressOf(first.node, nodeRows.get(first.node)), masterPort(mine.jobId), spec.checkpointable(),
                    spec.checkpointGraceSeconds(), stop, grace,
                    report == null ? null : report.state, report == null ? null : report.exitCode,
                    group == null ? null : group.image(), group == null ? null : group.workingDir(), group == null ? null : group.env(),
                    mine.migDevices == null ? List.of() : List.of(mine.migDevices)));
        }
        out.sort(Comparator.comparing((Assignment a) -> a.jobId().toString()).thenComparing(Assignment::task));
        return new Assignments(node, fingerprint(out), out);
    }

    /** The attempt of a placed job: its binding, named by the time it was bound (ms), new at every placement. */
    public static long attemptOf(RunningJobRecord job) {
        return job.boundAt.toEpochMilli();
    }

    /** Ranks follow the job's task groups in their order, then the replica index ({@code worker-2} before {@code worker-10}). */
    static Comparator<Allocation> taskOrder(JobQueued spec) {
        List<String> groups = spec.taskGroups().stream().map(JobQueued.TaskGroup::name).toList();
        return Comparator.comparingInt((Allocation a) -> {
            int i = groups.indexOf(groupName(a.task));
            return i < 0 ? Integer.MAX_VALUE : i;
        }).thenComparingInt(a -> replicaIndex(a.task)).thenComparing(a -> a.task);
    }

    static String groupName(String task) {
        return task.replaceFirst("-\\d+$", "");
    }

    static int replicaIndex(String task) {
        int dash = task.lastIndexOf('-');
        try {
            return dash < 0 ? 0 : Integer.parseInt(task.substring(dash + 1));
        } catch (NumberFormatException e) {
            return 0;
        }
    }

    static JobQueued.TaskGroup groupOf(JobQueued spec, String task) {
        String name = groupName(task);
        return spec.taskGroups().stream().filter(g -> g.name().equals(name)).findFirst().orElse(null);
    }

    /** Where rank 0's node is reached: the address its agent registered, else its name. */
    static String addressOf(String node, NodeRecord row) {
        if (row != null && row.info != null && !row.removed) {
            try {
                NodeInfo info = EventCodec.fromJson(row.info, NodeInfo.class);
                String address = info.labels().get(ADDRESS_LABEL);
                if (address != null && !address.isBlank()) {
                    return address;
                }
            } catch (RuntimeException e) {
                // an unreadable description: fall back to the name
            }
        }
        return node;
    }

    /** The job's rendezvous port: fixed by its id, in 20000..39999, so every rank computes the same. */
    static int masterPort(UUID jobId) {
        return 20_000 + Math.floorMod(jobId.hashCode(), 20_000);
    }

    private static String fingerprint(List<Assignment> assignments) {
        try {
            MessageDigest sha = MessageDigest.getInstance("SHA-256");
            // the grace left counts down by itself: only whether a task must stop is a change
            sha.update(EventCodec.toJson(assignments.stream().map(a -> List.of(a.jobId(), a.attempt(), a.task(), a.stop(),
                    String.valueOf(a.reported()), String.valueOf(a.exitCode()), a.gpus(), a.migDevices(), a.rank(), a.worldSize())).toList())
                    .getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(sha.digest(), 0, 12);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
