package dev.gantry.contracts.placements;

import com.fasterxml.jackson.annotation.JsonCreator;
import java.time.Instant;
import java.util.List;
import java.util.UUID;

/**
 * Payload of {@code placements.bound}: a job's whole gang was bound to nodes and now holds these
 * resources in its queue until a {@link PlacementReleased} for the same job.
 *
 * @param gpuModel the model of the GPUs it holds; null when none or mixed
 * @param owner    the submitting user (null if unknown)
 * @param tasks    where each task of the gang was bound (node, GPU indices); empty in events of
 *                 producers older than this field
 */
public record PlacementBound(UUID jobId, String queue, String owner, int gpus, String gpuModel, long cpuMillis, long memoryMiB,
        Instant boundAt, List<BoundTask> tasks) {

    @JsonCreator
    public PlacementBound {
        tasks = tasks == null ? List.of() : List.copyOf(tasks);
    }

    /** Without the tasks (what producers sent before {@code tasks} existed). */
    public PlacementBound(UUID jobId, String queue, String owner, int gpus, String gpuModel, long cpuMillis, long memoryMiB,
            Instant boundAt) {
        this(jobId, queue, owner, gpus, gpuModel, cpuMillis, memoryMiB, boundAt, List.of());
    }

    /**
     * One task of the bound gang.
     *
     * @param task     the task's name, {@code <task group>-<replica index>}
     * @param node     the node it was bound to
     * @param gpus     the indices of its GPUs on that node (empty: none)
     * @param gpuMilli thousandths of each GPU it shares, null when it holds its GPUs whole
     * @param migDevices the MIG devices it holds (their ids, see {@code NodeInfo.MigDevice}); empty when none, and
     *                 left out of the JSON then
     */
    public record BoundTask(String task, String node, List<Integer> gpus, Integer gpuMilli,
            @com.fasterxml.jackson.annotation.JsonInclude(com.fasterxml.jackson.annotation.JsonInclude.Include.NON_EMPTY)
            List<String> migDevices) {
        @JsonCreator
        public BoundTask {
            gpus = gpus == null ? List.of() : List.copyOf(gpus);
            migDevices = migDevices == null ? List.of() : List.copyOf(migDevices);
        }

        /** Without MIG devices. */
        public BoundTask(String task, String node, List<Integer> gpus, Integer gpuMilli) {
            this(task, node, gpus, gpuMilli, List.of());
        }
    }
}
