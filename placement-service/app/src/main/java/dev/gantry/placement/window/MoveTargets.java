package dev.gantry.placement.window;

import com.fasterxml.jackson.core.type.TypeReference;
import dev.gantry.contracts.events.EventCodec;
import dev.gantry.placement.persistence.Allocation;
import dev.gantry.placement.persistence.RunningJobRecord;
import io.smallrye.mutiny.Uni;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;

/**
 * The GPUs a moving job goes to ({@code running_job.migration_targets}): held for it from the
 * moment its move is recorded until the move is finished, so no placement takes them meanwhile.
 */
final class MoveTargets {

    /**
     * One task's new place, with what it asks of the node besides GPUs; a task on MIG devices goes to
     * {@code migDevices} of its {@code migProfile} (targets stored before MIG moves have neither: whole GPUs).
     */
    record Target(String task, String node, List<Integer> gpus, Integer gpuMilli, long cpuMillis, long memoryMiB, String migProfile,
            List<String> migDevices) {
        Target {
            gpus = gpus == null ? List.of() : List.copyOf(gpus);
            migDevices = migDevices == null ? List.of() : List.copyOf(migDevices);
            migProfile = migDevices.isEmpty() ? null : migProfile;
        }
    }

    private static final TypeReference<List<Target>> LIST = new TypeReference<>() {
    };

    private MoveTargets() {
    }

    static String toJson(List<Target> targets) {
        return EventCodec.toJson(targets);
    }

    /** The targets stored with a running job; empty when it is not moving (or the column is unreadable). */
    static List<Target> of(String json) {
        if (json == null || json.isBlank()) {
            return List.of();
        }
        try {
            return List.copyOf(EventCodec.mapper().readValue(json, LIST));
        } catch (Exception e) {
            return List.of();
        }
    }

    /** The nodes of a list of places, in order, comma-separated ("dgx-01,dgx-02"). */
    static String nodes(List<String> nodes) {
        return String.join(",", new LinkedHashSet<>(nodes));
    }

    /**
     * The GPUs held for moving jobs on {@code nodes}, as unsaved allocation rows (to check a placement
     * against, with the allocations). Inside a session.
     */
    static Uni<List<Allocation>> heldOn(Set<String> nodes) {
        return RunningJobRecord.<RunningJobRecord>list("migrationTargets is not null").map(moving -> {
            List<Allocation> held = new ArrayList<>();
            for (RunningJobRecord job : moving) {
                for (Target t : of(job.migrationTargets)) {
                    if (nodes.contains(t.node())) {
                        held.add(hold(job.jobId, t));
                    }
                }
            }
            return held;
        });
    }

    /** A target as an unsaved allocation row. */
    static Allocation hold(UUID jobId, Target t) {
        Allocation a = new Allocation();
        a.jobId = jobId;
        a.task = t.task();
        a.node = t.node();
        a.gpuIndices = t.gpus().stream().mapToInt(Integer::intValue).toArray();
        a.gpuMilli = t.gpuMilli();
        a.migProfile = t.migProfile();
        a.migDevices = t.migDevices().toArray(String[]::new);
        a.cpuMillis = t.cpuMillis();
        a.memoryMiB = t.memoryMiB();
        return a;
    }
}
