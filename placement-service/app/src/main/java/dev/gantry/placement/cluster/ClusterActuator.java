package dev.gantry.placement.cluster;

import dev.gantry.contracts.jobs.JobQueued;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * What the binder does to the cluster once its decision is recorded. Standalone mode has no
 * cluster ({@link #acts()} false, every call a no-op); the kubernetes mode creates and binds pods,
 * evicts victims and deletes pods. Calls block (API round trips with retries): run them off the
 * event loop.
 */
public interface ClusterActuator {

    /** False when the allocations are the whole outcome (standalone). */
    boolean acts();

    /**
     * Runs the gang on the nodes of its allocations: all pods bound, or none (what was created is
     * deleted again) and a {@link ClusterActionException}.
     */
    void launch(Gang gang);

    /** Asks the gang's pods to stop within {@code grace} (checkpoint time), then they are deleted. */
    void evict(GangRef gang, Duration grace);

    /** Deletes the pods gantry created for the gang (cancelled or failed); users' own pods are left alone. */
    void stop(GangRef gang);

    /** Which pods belong to a job: namespace, their {@code gantry.dev/job} label, and whether a user created them. */
    record GangRef(UUID jobId, String namespace, String label, boolean userPods) {
    }

    /** One task's share of a placement: GPU indices (whole or a share), or MIG devices of a profile (ids). */
    record TaskBinding(String task, String node, List<Integer> gpus, Integer gpuMilli, String migProfile, List<String> migDevices) {
        public TaskBinding {
            gpus = gpus == null ? List.of() : List.copyOf(gpus);
            migDevices = migDevices == null ? List.of() : List.copyOf(migDevices);
        }

        /** On whole or shared GPUs. */
        public TaskBinding(String task, String node, List<Integer> gpus, Integer gpuMilli) {
            this(task, node, gpus, gpuMilli, null, List.of());
        }

        /** Whether the task holds any GPU or MIG device. */
        public boolean hasDevices() {
            return !gpus.isEmpty() || !migDevices.isEmpty();
        }
    }

    /**
     * A placed gang: its spec (image and command per task group), where each task goes and, for
     * users' pods, which existing pod each task is (task -> pod name; empty for API jobs).
     * {@code attempt} counts the job's placements, so the pods of a new attempt never collide with
     * those of an evicted one that are still terminating.
     */
    record Gang(GangRef ref, JobQueued spec, List<TaskBinding> tasks, Map<String, String> userPods, int attempt) {
    }
}
