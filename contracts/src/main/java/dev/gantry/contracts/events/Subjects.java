package dev.gantry.contracts.events;

import java.util.List;

/**
 * NATS JetStream streams and subjects. A subject is also the {@code type} of the events on it.
 * Streams capture a whole prefix ({@code jobs.>}), so adding an event type needs no broker change.
 */
public final class Subjects {

    public static final String JOBS_STREAM = "JOBS";
    public static final String NODES_STREAM = "NODES";
    public static final String QUOTA_STREAM = "QUOTA";
    public static final String PLACEMENTS_STREAM = "PLACEMENTS";

    public static final String JOBS_QUEUED = "jobs.queued";
    public static final String JOBS_CANCELLED = "jobs.cancelled";
    /** Admission did not admit a user's pod gang (payload: JobRefused). */
    public static final String JOBS_REFUSED = "jobs.refused";

    public static final String NODES_UPSERTED = "nodes.upserted";
    public static final String NODES_REMOVED = "nodes.removed";

    public static final String QUOTA_SHARES = "quota.shares";

    public static final String PLACEMENTS_BOUND = "placements.bound";
    public static final String PLACEMENTS_PREEMPTED = "placements.preempted";
    /** A step of a move of a running job to defragment the cluster (payload: PlacementMigrated). */
    public static final String PLACEMENTS_MIGRATED = "placements.migrated";
    /** The job itself failed (its pods or process failed); it ends FAILED. Payload: PlacementReleased. */
    public static final String PLACEMENTS_FAILED = "placements.failed";
    /**
     * The job lost its placement through no fault of its own (node lost, transient launch failure, pod
     * deleted outside Gantry) and is back in line with its submission time. Payload: PlacementReleased.
     */
    public static final String PLACEMENTS_REQUEUED = "placements.requeued";
    /** The job ran to its end and released its GPUs (payload: PlacementReleased). */
    public static final String PLACEMENTS_COMPLETED = "placements.completed";
    /** A queued job still waits after a window, and why (payload: PlacementPending); sent when the reason changes. */
    public static final String PLACEMENTS_PENDING = "placements.pending";
    /** Pods a user created make a gang; admission is asked to admit it (payload: PodGangFormed). */
    public static final String PLACEMENTS_GANG_FORMED = "placements.gang-formed";
    /** A user's gang not yet placed fell below its minimum; admission withdraws it (payload: PodGangDissolved). */
    public static final String PLACEMENTS_GANG_DISSOLVED = "placements.gang-dissolved";

    /** Every subject an event may be published on; an outbox row naming another is a bug. */
    public static final List<String> ALL = List.of(
            JOBS_QUEUED, JOBS_CANCELLED, JOBS_REFUSED, NODES_UPSERTED, NODES_REMOVED, QUOTA_SHARES,
            PLACEMENTS_BOUND, PLACEMENTS_PREEMPTED, PLACEMENTS_MIGRATED, PLACEMENTS_FAILED, PLACEMENTS_REQUEUED, PLACEMENTS_COMPLETED,
            PLACEMENTS_PENDING, PLACEMENTS_GANG_FORMED, PLACEMENTS_GANG_DISSOLVED);

    private Subjects() {
    }

    /** The stream that captures a subject, from its first token. */
    public static String streamOf(String subject) {
        String prefix = subject.substring(0, subject.indexOf('.'));
        return switch (prefix) {
            case "jobs" -> JOBS_STREAM;
            case "nodes" -> NODES_STREAM;
            case "quota" -> QUOTA_STREAM;
            case "placements" -> PLACEMENTS_STREAM;
            default -> throw new IllegalArgumentException("no stream captures subject " + subject);
        };
    }
}
