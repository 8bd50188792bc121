package dev.gantry.admission.domain;

import java.util.Optional;

/**
 * What placement said of a job, and where that puts the job. Placement numbers its events (the
 * sequence of its outbox), so admission applies them in placement's order whatever order the broker
 * delivered them in: a report older than the last one applied changes nothing, a newer one states
 * where the job is now, even when the reports between were delayed ({@code completed} before
 * {@code bound} ends the job SUCCEEDED; the late {@code bound} is then stale). A final state
 * (succeeded, failed, cancelled by its user) is never left.
 *
 * <p>A report without a sequence (0: published outside an outbox) is applied only where the job's
 * own transitions allow it, as before sequences existed.
 */
public enum PlacementReport {
    /** placements.bound: the gang holds its GPUs. */
    BOUND(JobState.PLACED),
    /** placements.preempted: evicted for a more important job, back in line. */
    PREEMPTED(JobState.QUEUED),
    /** placements.requeued: lost its placement through no fault of its own, back in line. */
    REQUEUED(JobState.QUEUED),
    /** placements.pending: still waits after a window, with the reason. */
    PENDING(JobState.QUEUED),
    /** placements.completed: ran to its end. */
    COMPLETED(JobState.SUCCEEDED),
    /** placements.failed: the job itself failed. */
    FAILED(JobState.FAILED),
    /** placements.migrated: moved to other GPUs to defragment (stopping, moved; still placed), or abandoned (back in line). */
    MIGRATED(JobState.PLACED),
    /** placements.migrated, abandoned: the move could not be finished; a placements.requeued follows. */
    MIGRATION_ABANDONED(JobState.QUEUED);

    private final JobState reportedState;

    PlacementReport(JobState reportedState) {
        this.reportedState = reportedState;
    }

    /** The state placement reports the job in. */
    public JobState reportedState() {
        return reportedState;
    }

    /**
     * The job's state after this report, or empty when the report is stale (older than the last
     * applied one, or about a job that has ended).
     *
     * @param current      the job's state now
     * @param lastApplied  the sequence of the last report applied to the job (0: none yet)
     * @param sequence     this report's sequence (0: unknown)
     */
    public Optional<JobState> apply(JobState current, long lastApplied, long sequence) {
        if (current.isFinal()) {
            return Optional.empty();
        }
        if (sequence > 0) {
            return sequence > lastApplied ? Optional.of(reportedState) : Optional.empty();
        }
        return unordered(current);
    }

    /** Without a sequence: only the moves the job's lifecycle allows from where it is. */
    private Optional<JobState> unordered(JobState current) {
        boolean allowed = switch (this) {
            case BOUND -> current == JobState.QUEUED;
            case PENDING -> current == JobState.QUEUED;
            case PREEMPTED, REQUEUED -> current.canBecome(JobState.PREEMPTED);
            case COMPLETED -> current == JobState.PLACED || current.canBecome(JobState.SUCCEEDED);
            case FAILED -> current.canBecome(JobState.FAILED);
            case MIGRATED -> current == JobState.PLACED;
            case MIGRATION_ABANDONED -> current.canBecome(JobState.PREEMPTED);
        };
        return allowed ? Optional.of(reportedState) : Optional.empty();
    }
}
