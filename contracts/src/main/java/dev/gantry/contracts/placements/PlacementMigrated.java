package dev.gantry.contracts.placements;

import com.fasterxml.jackson.annotation.JsonCreator;
import java.time.Instant;
import java.util.List;
import java.util.UUID;

/**
 * Payload of {@code placements.migrated}: a step of one move of a running job to defragment the
 * cluster. {@code stopping}: the move is recorded, the job is told to checkpoint and stop (its
 * grace ends at {@code graceUntil}) and its new GPUs are held for it; {@code moved}: it holds the
 * GPUs in {@code tasks} now and starts again there as a new attempt (resuming from its checkpoint);
 * {@code abandoned}: the move could not be finished (see {@code reason}), the job is back in line.
 * The job's GPU count and queue do not change, so quota has nothing to charge.
 *
 * @param from the nodes it ran on, e.g. {@code "dgx-01"} or {@code "dgx-01,dgx-02"}
 * @param to   the nodes it moves to
 */
public record PlacementMigrated(UUID jobId, String queue, String phase, String from, String to, String reason, Instant at,
        Instant graceUntil, List<PlacementBound.BoundTask> tasks) {

    public static final String STOPPING = "stopping";
    public static final String MOVED = "moved";
    public static final String ABANDONED = "abandoned";

    @JsonCreator
    public PlacementMigrated {
        tasks = tasks == null ? List.of() : List.copyOf(tasks);
    }

    /** What a person reads in the job's history. */
    public String describe() {
        return switch (phase == null ? "" : phase) {
            case STOPPING -> "migrating from " + from + " to " + to + ": checkpointing" + (reason == null ? "" : " (" + reason + ")");
            case MOVED -> "migrated from " + from + " to " + to;
            default -> "migration from " + from + " to " + to + " abandoned" + (reason == null ? "" : ": " + reason);
        };
    }
}
