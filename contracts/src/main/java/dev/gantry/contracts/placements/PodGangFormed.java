package dev.gantry.contracts.placements;

import dev.gantry.contracts.jobs.JobQueued;
import java.time.Instant;
import java.util.UUID;

/**
 * Payload of {@code placements.gang-formed}: in Kubernetes mode, pods a user created for Gantry
 * (label {@code gantry.dev/job}, at least {@code gantry.dev/min-available} of them waiting) make a
 * gang. Placement asks admission to admit it as it would an API job: admission maps the namespace
 * to a team, checks membership and quota, and either queues it ({@code jobs.queued} with this job
 * id) or refuses it ({@code jobs.refused}). {@code spec} is what the pods ask for; its job id is
 * {@code jobId}, chosen by placement, never taken from a label.
 */
public record PodGangFormed(UUID jobId, String namespace, String gang, JobQueued spec, Instant formedAt) {

    /** The owner admission gives an admitted pod gang's job: this, then the namespace. */
    public static final String SUBMITTER_PREFIX = "system:pod-gang:";

    public static boolean isPodGangOwner(String owner) {
        return owner != null && owner.startsWith(SUBMITTER_PREFIX);
    }
}
