package dev.gantry.placement.engine.domain;

import java.util.List;
import java.util.Map;

/**
 * A job already running at the start of the window. {@code nodeSelector} and {@code tolerations}
 * say where a move may take it (as a pending job's do); empty for a job that cannot move.
 */
public record RunningJob(
        String name,
        String queue,
        int priority,
        boolean preemptible,
        boolean checkpointable,
        boolean migratable,
        long startedAtSeconds,
        List<RunningTask> tasks,
        Map<String, String> nodeSelector,
        List<Toleration> tolerations) {

    public RunningJob {
        tasks = List.copyOf(tasks);
        nodeSelector = nodeSelector == null ? Map.of() : Map.copyOf(nodeSelector);
        tolerations = tolerations == null ? List.of() : List.copyOf(tolerations);
    }

    /** Without node selector and tolerations (a move may then go to untainted nodes only). */
    public RunningJob(String name, String queue, int priority, boolean preemptible, boolean checkpointable, boolean migratable,
            long startedAtSeconds, List<RunningTask> tasks) {
        this(name, queue, priority, preemptible, checkpointable, migratable, startedAtSeconds, tasks, Map.of(), List.of());
    }

    public long gpuMilli() {
        return tasks.stream().mapToLong(RunningTask::gpuMilliTotal).sum();
    }

    /** Neither moving nor evicting it is allowed: its GPUs are fixed facts for the planner. */
    public boolean pinned() {
        return !preemptible && !migratable;
    }
}
