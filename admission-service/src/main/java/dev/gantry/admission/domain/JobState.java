package dev.gantry.admission.domain;

import java.util.EnumSet;
import java.util.Set;

/** Where a job is in its life. Transitions not listed here are refused. */
public enum JobState {
    QUEUED, PLACED, RUNNING, SUCCEEDED, FAILED, PREEMPTED, CANCELLED;

    public Set<JobState> next() {
        return switch (this) {
            case QUEUED -> EnumSet.of(PLACED, CANCELLED);
            case PLACED -> EnumSet.of(RUNNING, PREEMPTED, FAILED, CANCELLED);
            case RUNNING -> EnumSet.of(SUCCEEDED, FAILED, PREEMPTED, CANCELLED);
            case PREEMPTED -> EnumSet.of(QUEUED, CANCELLED);
            case SUCCEEDED, FAILED, CANCELLED -> EnumSet.noneOf(JobState.class);
        };
    }

    public boolean canBecome(JobState target) {
        return next().contains(target);
    }

    public boolean isFinal() {
        return next().isEmpty();
    }
}
