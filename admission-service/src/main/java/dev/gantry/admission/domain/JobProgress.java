package dev.gantry.admission.domain;

import java.time.Instant;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import java.util.function.Consumer;
import java.util.function.IntFunction;

/**
 * The part of a job that placement's reports change: its state, why it waits, the last report
 * applied, its attempts, where it ran and how it ended. Plain state, so a burst of reports is applied
 * in memory, in order, and written back in a few statements (issue 18 item 6), by the same rules as
 * one report at a time.
 */
public final class JobProgress {

    /** A step in the job's history: the state it entered, why, and the report that said so. */
    public record Step(JobState state, String reason, String source) {
    }

    /** What a report did: nothing ({@code stale}), or a change with the history step it is worth (if any). */
    public record Outcome(boolean stale, Optional<Step> step) {
        static final Outcome STALE = new Outcome(true, Optional.empty());
    }

    private final UUID id;
    private final Instant submittedAt;
    private JobState state;
    private String pendingReason;
    private long placementSequence;
    private int attempts;
    private String placement;
    private Integer exitCode;
    private boolean changed;

    public JobProgress(UUID id, Instant submittedAt, JobState state, String pendingReason, long placementSequence, int attempts,
            String placement, Integer exitCode) {
        this.id = Objects.requireNonNull(id);
        this.submittedAt = submittedAt;
        this.state = Objects.requireNonNull(state);
        this.pendingReason = pendingReason;
        this.placementSequence = placementSequence;
        this.attempts = attempts;
        this.placement = placement;
        this.exitCode = exitCode;
    }

    /**
     * Applies one report in placement's order ({@link PlacementReport#apply}); a stale one changes
     * nothing. {@code onApplied} adjusts the rest (attempts, placement, exit code) once it applies. A
     * waiting job's reason changes often, so only a new state, or a new reason outside
     * {@code placements.pending}, is worth a step in its history.
     */
    public Outcome apply(PlacementReport report, long sequence, String reason, String source, Consumer<JobProgress> onApplied) {
        Optional<JobState> next = report.apply(state, placementSequence, sequence);
        if (next.isEmpty()) {
            return Outcome.STALE;
        }
        boolean stateChanged = next.get() != state;
        boolean reasonChanged = !Objects.equals(reason, pendingReason);
        state = next.get();
        pendingReason = reason;
        placementSequence = Math.max(placementSequence, sequence);
        changed = true;
        if (onApplied != null) {
            onApplied.accept(this);
        }
        boolean worthAStep = stateChanged || (report != PlacementReport.PENDING && reasonChanged);
        return new Outcome(false, worthAStep ? Optional.of(new Step(state, reason, source)) : Optional.empty());
    }

    /** Placed again: a new attempt, where it runs now; the last attempt's exit code is no longer this one's. */
    public void startAttempt(IntFunction<String> placementOfAttempt) {
        attempts++;
        placement = placementOfAttempt.apply(attempts);
        exitCode = null;
    }

    public void ended(Integer code) {
        exitCode = code;
    }

    public UUID id() {
        return id;
    }

    public Instant submittedAt() {
        return submittedAt;
    }

    public JobState state() {
        return state;
    }

    public String pendingReason() {
        return pendingReason;
    }

    public long placementSequence() {
        return placementSequence;
    }

    public int attempts() {
        return attempts;
    }

    public String placement() {
        return placement;
    }

    public Integer exitCode() {
        return exitCode;
    }

    /** Whether any report applied since it was read (it must be written back). */
    public boolean changed() {
        return changed;
    }
}
