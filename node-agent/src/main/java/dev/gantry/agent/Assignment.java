package dev.gantry.agent;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.stream.Collectors;

/**
 * One task placement asks this node to run ({@code GET /v1/agent/assignments}): which job, attempt
 * and task, the command, the GPUs (or MIG devices, by UUID) allocated to it on this node and its place in the gang.
 */
@JsonIgnoreProperties(ignoreUnknown = true)
public record Assignment(UUID jobId, String jobName, long attempt, String task, String taskGroup, List<String> command,
        List<Integer> gpus, Integer gpuMilli, long cpuMillis, long memoryMiB, int rank, int worldSize, int localRank,
        int localWorldSize, int nodeRank, int nodes, String masterAddr, int masterPort, boolean checkpointable,
        Integer checkpointGraceSeconds, boolean stop, long stopGraceSeconds, String reported, Integer exitCode, String image,
        String workingDir, Map<String, String> env, List<String> migDevices) {

    public Assignment {
        command = command == null ? List.of() : command;
        gpus = gpus == null ? List.of() : gpus;
        env = env == null ? Map.of() : env;
        migDevices = migDevices == null ? List.of() : migDevices;
    }

    /** Without MIG devices (as placement sent before it had them). */
    public Assignment(UUID jobId, String jobName, long attempt, String task, String taskGroup, List<String> command, List<Integer> gpus,
            Integer gpuMilli, long cpuMillis, long memoryMiB, int rank, int worldSize, int localRank, int localWorldSize, int nodeRank,
            int nodes, String masterAddr, int masterPort, boolean checkpointable, Integer checkpointGraceSeconds, boolean stop,
            long stopGraceSeconds, String reported, Integer exitCode, String image, String workingDir, Map<String, String> env) {
        this(jobId, jobName, attempt, task, taskGroup, command, gpus, gpuMilli, cpuMillis, memoryMiB, rank, worldSize, localRank,
                localWorldSize, nodeRank, nodes, masterAddr, masterPort, checkpointable, checkpointGraceSeconds, stop, stopGraceSeconds,
                reported, exitCode, image, workingDir, env, List.of());
    }

    /** Without image, working directory and environment (as placement sent before it had them). */
    public Assignment(UUID jobId, String jobName, long attempt, String task, String taskGroup, List<String> command, List<Integer> gpus,
            Integer gpuMilli, long cpuMillis, long memoryMiB, int rank, int worldSize, int localRank, int localWorldSize, int nodeRank,
            int nodes, String masterAddr, int masterPort, boolean checkpointable, Integer checkpointGraceSeconds, boolean stop,
            long stopGraceSeconds, String reported, Integer exitCode) {
        this(jobId, jobName, attempt, task, taskGroup, command, gpus, gpuMilli, cpuMillis, memoryMiB, rank, worldSize, localRank,
                localWorldSize, nodeRank, nodes, masterAddr, masterPort, checkpointable, checkpointGraceSeconds, stop, stopGraceSeconds,
                reported, exitCode, null, null, null, List.of());
    }

    /** The task's identity: one process per (job, attempt, task). */
    public record Key(UUID jobId, long attempt, String task) {
        @Override
        public String toString() {
            return jobId + "/" + attempt + "/" + task;
        }
    }

    public Key key() {
        return new Key(jobId, attempt, task);
    }

    /** The grace between SIGTERM and SIGKILL when the task is stopped: the job's {@code checkpointGraceSeconds}, else {@code otherwise}. */
    public java.time.Duration grace(java.time.Duration otherwise) {
        return checkpointGraceSeconds == null ? otherwise : java.time.Duration.ofSeconds(checkpointGraceSeconds);
    }

    /**
     * The environment the task runs with: exactly its GPUs visible ({@code CUDA_VISIBLE_DEVICES},
     * {@code NVIDIA_VISIBLE_DEVICES}; empty for a task without GPUs; a task on MIG devices sees their UUIDs,
     * {@code MIG-…}, which CUDA and the NVIDIA container runtime take there), the variables torchrun and PyTorch
     * DDP read, and Gantry's own, over the job's {@code env}.
     */
    public Map<String, String> environment(Path checkpointDir) {
        // the job's own variables first: Gantry's below win (admission refuses a job that sets them anyway)
        Map<String, String> env = new LinkedHashMap<>(this.env);
        String visible = !migDevices.isEmpty() ? String.join(",", migDevices)
                : gpus.stream().map(String::valueOf).collect(Collectors.joining(","));
        env.put("CUDA_VISIBLE_DEVICES", visible);
        env.put("NVIDIA_VISIBLE_DEVICES", visible.isEmpty() ? "void" : visible);
        env.put("MASTER_ADDR", masterAddr);
        env.put("MASTER_PORT", String.valueOf(masterPort));
        env.put("WORLD_SIZE", String.valueOf(worldSize));
        env.put("RANK", String.valueOf(rank));
        env.put("LOCAL_RANK", String.valueOf(localRank));
        env.put("LOCAL_WORLD_SIZE", String.valueOf(localWorldSize));
        env.put("NODE_RANK", String.valueOf(nodeRank));
        env.put("GANTRY_JOB_ID", jobId.toString());
        env.put("GANTRY_JOB_NAME", jobName == null ? "" : jobName);
        env.put("GANTRY_TASK", task);
        env.put("GANTRY_ATTEMPT", String.valueOf(attempt));
        env.put("GANTRY_CHECKPOINT_DIR", checkpointDir.toString());
        return env;
    }
}
