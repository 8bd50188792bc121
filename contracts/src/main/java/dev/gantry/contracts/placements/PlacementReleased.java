package dev.gantry.contracts.placements;

import com.fasterxml.jackson.annotation.JsonCreator;
import java.time.Instant;
import java.util.UUID;

/**
 * Payload of {@code placements.preempted}, {@code placements.failed} and {@code placements.completed}: the job no longer holds
 * what its {@link PlacementBound} gave it. {@code reason} says why, for people (e.g. "reclaimed by
 * queue urgent", "node dgx-03 lost", "completed").
 *
 * @param exitCode the job's exit code when its processes reported one (node agents: the failing
 *                 task's code, 0 when every task exited 0); null otherwise (simulated runs, pods,
 *                 preemptions, producers older than this field)
 */
public record PlacementReleased(UUID jobId, String queue, String reason, Instant releasedAt, Integer exitCode) {

    @JsonCreator
    public PlacementReleased {
    }

    /** Without an exit code. */
    public PlacementReleased(UUID jobId, String queue, String reason, Instant releasedAt) {
        this(jobId, queue, reason, releasedAt, null);
    }
}
