package dev.gantry.admission.domain;

import dev.gantry.contracts.events.EventCodec;
import dev.gantry.contracts.placements.PlacementBound;
import dev.gantry.contracts.placements.PlacementMigrated;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

/**
 * Where one attempt of a job was placed, from its {@code placements.bound}: each task on its node
 * and GPU indices. Stored with the job as JSON ({@code job.placement}); the last one is kept after
 * the job leaves it (preempted, requeued, ended), as history.
 *
 * @param attempt which of the job's attempts (1: the first time it was placed)
 * @param boundAt when placement bound it
 * @param tasks   each task, in placement's order (empty when placement's event did not say)
 */
public record JobPlacement(int attempt, Instant boundAt, List<Task> tasks) {

    public JobPlacement {
        tasks = tasks == null ? List.of() : List.copyOf(tasks);
    }

    /**
     * One task: its node, the indices of its GPUs there, the thousandths of each it shares (null: whole GPUs), the
     * MIG devices it holds (ids; left out of the JSON when none).
     */
    public record Task(String task, String node, List<Integer> gpus, Integer gpuMilli,
            @com.fasterxml.jackson.annotation.JsonInclude(com.fasterxml.jackson.annotation.JsonInclude.Include.NON_EMPTY)
            List<String> migDevices) {
        public Task {
            gpus = gpus == null ? List.of() : List.copyOf(gpus);
            migDevices = migDevices == null ? List.of() : List.copyOf(migDevices);
        }

        /** On whole or shared GPUs. */
        public Task(String task, String node, List<Integer> gpus, Integer gpuMilli) {
            this(task, node, gpus, gpuMilli, List.of());
        }
    }

    public static JobPlacement of(int attempt, PlacementBound bound) {
        List<Task> tasks = new ArrayList<>();
        for (PlacementBound.BoundTask t : bound.tasks()) {
            tasks.add(new Task(t.task(), t.node(), t.gpus(), t.gpuMilli(), t.migDevices()));
        }
        return new JobPlacement(attempt, bound.boundAt(), tasks);
    }

    /** Where a migrated job holds its GPUs now: a new attempt on the tasks it moved to. */
    public static JobPlacement moved(int attempt, PlacementMigrated moved) {
        List<Task> tasks = new ArrayList<>();
        for (PlacementBound.BoundTask t : moved.tasks()) {
            tasks.add(new Task(t.task(), t.node(), t.gpus(), t.gpuMilli(), t.migDevices()));
        }
        return new JobPlacement(attempt, moved.at(), tasks);
    }

    /**
     * The nodes with the GPU indices the job holds on each, in the order the nodes first appear:
     * {@code dgx-01[0-3],dgx-02[0,2]}; a node where it holds no GPU is its name alone; empty when
     * the tasks are unknown.
     */
    public String nodeList() {
        Map<String, TreeSet<Integer>> byNode = new LinkedHashMap<>();
        for (Task t : tasks) {
            byNode.computeIfAbsent(t.node(), n -> new TreeSet<>()).addAll(t.gpus());
        }
        StringBuilder list = new StringBuilder();
        byNode.forEach((node, gpus) -> {
            if (!list.isEmpty()) {
                list.append(',');
            }
            list.append(node);
            if (!gpus.isEmpty()) {
                list.append('[').append(ranges(gpus)).append(']');
            }
        });
        return list.toString();
    }

    /** 0,1,2,3,5 as {@code 0-3,5}. */
    static String ranges(TreeSet<Integer> sorted) {
        StringBuilder out = new StringBuilder();
        Integer start = null;
        Integer previous = null;
        for (int i : sorted) {
            if (start != null && i == previous + 1) {
                previous = i;
                continue;
            }
            if (start != null) {
                appendRange(out, start, previous);
            }
            start = i;
            previous = i;
        }
        if (start != null) {
            appendRange(out, start, previous);
        }
        return out.toString();
    }

    private static void appendRange(StringBuilder out, int start, int end) {
        if (!out.isEmpty()) {
            out.append(',');
        }
        out.append(start);
        if (end > start) {
            out.append('-').append(end);
        }
    }

    public String toJson() {
        return EventCodec.toJson(this);
    }

    /** The stored form back; null for null. */
    public static JobPlacement fromJson(String json) {
        return json == null ? null : EventCodec.fromJson(json, JobPlacement.class);
    }
}
