package dev.gantry.placement.engine.domain;

import java.util.List;
import java.util.Map;

/** A job waiting for placement: a gang of task groups, all-or-nothing down to {@code minAvailable} pods. */
public record PendingJob(
        String name,
        String queue,
        int priority,
        long submittedAtSeconds,
        List<TaskGroup> taskGroups,
        int minAvailable,
        List<String> gpuModels,
        GpuTopology gpuTopology,
        Network network,
        boolean requireInfiniBand,
        Map<String, String> nodeSelector,
        List<Toleration> tolerations,
        boolean preemptible,
        boolean checkpointable,
        Long estimatedRuntimeSeconds) {

    public PendingJob {
        taskGroups = List.copyOf(taskGroups);
        gpuModels = gpuModels == null ? List.of() : List.copyOf(gpuModels);
        gpuTopology = gpuTopology == null ? GpuTopology.ANY : gpuTopology;
        network = network == null ? Network.ANY : network;
        nodeSelector = nodeSelector == null ? Map.of() : Map.copyOf(nodeSelector);
        tolerations = tolerations == null ? List.of() : List.copyOf(tolerations);
    }

    /** The same job with another runtime estimate (a caller that estimates runtimes for jobs that give none). */
    public PendingJob withEstimatedRuntimeSeconds(Long seconds) {
        return new PendingJob(name, queue, priority, submittedAtSeconds, taskGroups, minAvailable, gpuModels, gpuTopology, network,
                requireInfiniBand, nodeSelector, tolerations, preemptible, checkpointable, seconds);
    }

    /** The task group of a task named {@code <group>-<index>}, or null. */
    public TaskGroup taskGroupOf(String task) {
        int dash = task.lastIndexOf('-');
        String group = dash < 0 ? task : task.substring(0, dash);
        return taskGroups.stream().filter(g -> g.name().equals(group)).findFirst().orElse(null);
    }

    public int totalReplicas() {
        return taskGroups.stream().mapToInt(TaskGroup::replicas).sum();
    }

    /** GPUs of the whole job in thousandths. */
    public long gpuMilli() {
        return taskGroups.stream().mapToLong(g -> g.replicas() * g.replicaGpuMilli()).sum();
    }
}
