package dev.gantry.contracts.jobs;

import java.time.Instant;
import java.util.List;
import java.util.UUID;

/**
 * Payload of {@code jobs.queued}: a job admission accepted, with what placement needs to plan it.
 * Field names follow the pending job of the scenario format (FORMAT.md), so placement can map it
 * one to one.
 */
public record JobQueued(
        UUID jobId,
        String name,
        String queue,
        String owner,
        int priority,
        Instant submittedAt,
        Integer minAvailable,
        List<TaskGroup> taskGroups) {

    public record TaskGroup(String name, int replicas, int gpusPerReplica, Integer gpuMilli, long cpuMillis, long memoryMiB) {
    }

    /** GPUs the whole job asks for (a shared GPU slice counts as one). */
    public int totalGpus() {
        return taskGroups.stream().mapToInt(g -> g.replicas() * g.gpusPerReplica()).sum();
    }
}
