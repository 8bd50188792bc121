package dev.gantry.placement.engine.domain;

import java.util.List;

/** A job already running at the start of the window. */
public record RunningJob(
        String name,
        String queue,
        int priority,
        boolean preemptible,
        boolean checkpointable,
        boolean migratable,
        long startedAtSeconds,
        List<RunningTask> tasks) {

    public RunningJob {
        tasks = List.copyOf(tasks);
    }

    public long gpuMilli() {
        return tasks.stream().mapToLong(RunningTask::gpuMilliTotal).sum();
    }

    /** Neither moving nor evicting it is allowed: its GPUs are fixed facts for the planner. */
    public boolean pinned() {
        return !preemptible && !migratable;
    }
}
