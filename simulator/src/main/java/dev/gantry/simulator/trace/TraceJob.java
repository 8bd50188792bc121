package dev.gantry.simulator.trace;

import dev.gantry.placement.engine.domain.GpuTopology;
import dev.gantry.placement.engine.domain.Network;
import dev.gantry.placement.engine.domain.PendingJob;
import dev.gantry.placement.engine.domain.TaskGroup;
import java.util.List;
import java.util.Map;

/**
 * One job of a trace: when it arrives, how long it runs once started, and the pods it asks for.
 * {@code estimateSeconds} is what backfilling believes the runtime is (the trace's duration
 * unless the trace gives its own estimate).
 */
public record TraceJob(
        String name,
        String queue,
        int priority,
        long submitSeconds,
        long durationSeconds,
        long estimateSeconds,
        List<TaskGroup> taskGroups,
        List<String> gpuModels,
        Network network) {

    public TraceJob {
        taskGroups = List.copyOf(taskGroups);
        gpuModels = gpuModels == null ? List.of() : List.copyOf(gpuModels);
        network = network == null ? Network.ANY : network;
    }

    /** GPUs of the whole job in thousandths. */
    public long gpuMilli() {
        return taskGroups.stream().mapToLong(g -> g.replicas() * g.replicaGpuMilli()).sum();
    }

    public int pods() {
        return taskGroups.stream().mapToInt(TaskGroup::replicas).sum();
    }

    /** The job as a planner sees it while it waits; {@code remaining} after a checkpointed preemption. */
    public PendingJob pending(long remainingSeconds, boolean preemptible) {
        return new PendingJob(name, queue, priority, submitSeconds, taskGroups, pods(), gpuModels, GpuTopology.ANY, network,
                false, Map.of(), List.of(), preemptible, preemptible, remainingSeconds);
    }
}
