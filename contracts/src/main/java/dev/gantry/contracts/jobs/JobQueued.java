package dev.gantry.contracts.jobs;

import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * Payload of {@code jobs.queued}: a job admission accepted, with everything placement needs to plan
 * it. Field names follow the pending job of the scenario format (FORMAT.md), so placement maps it
 * one to one; nulls mean the format's defaults.
 */
public record JobQueued(
        UUID jobId,
        String name,
        String queue,
        String owner,
        int priority,
        Instant submittedAt,
        Integer minAvailable,
        List<TaskGroup> taskGroups,
        List<String> gpuModels,
        String gpuTopology,
        Network network,
        boolean requireInfiniBand,
        Map<String, String> nodeSelector,
        List<Toleration> tolerations,
        boolean preemptible,
        boolean checkpointable,
        Long estimatedRuntimeSeconds,
        Integer checkpointGraceSeconds,
        boolean migratable) {

    /** Not migratable: what producers before that field sent (placement never moves such a job while it runs). */
    public JobQueued(UUID jobId, String name, String queue, String owner, int priority, Instant submittedAt, Integer minAvailable,
            List<TaskGroup> taskGroups, List<String> gpuModels, String gpuTopology, Network network, boolean requireInfiniBand,
            Map<String, String> nodeSelector, List<Toleration> tolerations, boolean preemptible, boolean checkpointable,
            Long estimatedRuntimeSeconds, Integer checkpointGraceSeconds) {
        this(jobId, name, queue, owner, priority, submittedAt, minAvailable, taskGroups, gpuModels, gpuTopology, network,
                requireInfiniBand, nodeSelector, tolerations, preemptible, checkpointable, estimatedRuntimeSeconds,
                checkpointGraceSeconds, false);
    }

    /** A job without its own checkpoint grace (the default applies): what producers before that field sent. */
    public JobQueued(UUID jobId, String name, String queue, String owner, int priority, Instant submittedAt, Integer minAvailable,
            List<TaskGroup> taskGroups, List<String> gpuModels, String gpuTopology, Network network, boolean requireInfiniBand,
            Map<String, String> nodeSelector, List<Toleration> tolerations, boolean preemptible, boolean checkpointable,
            Long estimatedRuntimeSeconds) {
        this(jobId, name, queue, owner, priority, submittedAt, minAvailable, taskGroups, gpuModels, gpuTopology, network,
                requireInfiniBand, nodeSelector, tolerations, preemptible, checkpointable, estimatedRuntimeSeconds, null);
    }

    /**
     * {@code image} and {@code command}: what the kubernetes binder runs in each pod of the group
     * (null for jobs whose pods the user creates, and in standalone mode); {@code workingDir} and
     * {@code env}: where and with what environment a node agent runs each task (null: its defaults;
     * left out of the JSON then, so the event is what it was before these fields). {@code migProfile}: each
     * replica asks for {@code gpusPerReplica} MIG devices of this profile ({@code 1g.10gb}) instead of whole GPUs
     * (null: whole GPUs or a share; left out of the JSON then).
     */
    public record TaskGroup(String name, int replicas, int gpusPerReplica, Integer gpuMilli, long cpuMillis, long memoryMiB,
            String image, List<String> command,
            @com.fasterxml.jackson.annotation.JsonInclude(com.fasterxml.jackson.annotation.JsonInclude.Include.NON_NULL) String workingDir,
            @com.fasterxml.jackson.annotation.JsonInclude(com.fasterxml.jackson.annotation.JsonInclude.Include.NON_NULL)
            Map<String, String> env,
            @com.fasterxml.jackson.annotation.JsonInclude(com.fasterxml.jackson.annotation.JsonInclude.Include.NON_NULL) String migProfile) {

        /** Without a MIG profile: what producers before that field sent. */
        public TaskGroup(String name, int replicas, int gpusPerReplica, Integer gpuMilli, long cpuMillis, long memoryMiB,
                String image, List<String> command, String workingDir, Map<String, String> env) {
            this(name, replicas, gpusPerReplica, gpuMilli, cpuMillis, memoryMiB, image, command, workingDir, env, null);
        }

        /** Without image and command (planning needs neither). */
        public TaskGroup(String name, int replicas, int gpusPerReplica, Integer gpuMilli, long cpuMillis, long memoryMiB) {
            this(name, replicas, gpusPerReplica, gpuMilli, cpuMillis, memoryMiB, null, null);
        }

        /** Without working directory and environment: what producers before those fields sent. */
        public TaskGroup(String name, int replicas, int gpusPerReplica, Integer gpuMilli, long cpuMillis, long memoryMiB,
                String image, List<String> command) {
            this(name, replicas, gpusPerReplica, gpuMilli, cpuMillis, memoryMiB, image, command, null, null);
        }
    }

    /** {@code required} and {@code preferred}: any | node | leaf | spine | zone. */
    public record Network(String required, String preferred) {
    }

    /** Tolerates taints with this key (and value, when given). */
    public record Toleration(String key, String value) {
    }

    /** GPUs the whole job asks for (a shared GPU slice counts as one, and so does a MIG device). */
    public int totalGpus() {
        return taskGroups.stream().mapToInt(g -> g.replicas() * g.gpusPerReplica()).sum();
    }
}
