package dev.gantry.placement.engine.packing;

import dev.gantry.placement.engine.domain.PendingJob;
import java.util.Comparator;

/**
 * Waiting time counted as priority, so old jobs do not starve behind a stream of newer ones of
 * a slightly higher priority: the solver's value of a waiting job's GPUs and the order in which
 * the reservation picks its head.
 */
public final class Aging {
    /** One priority point per this many seconds waited. */
    static final long SECONDS_PER_POINT = 600;
    /** At most this many points. */
    static final long MAX_POINTS = 100;

    private Aging() {
    }

    /** The job's priority points for waiting since its submission (0 for a job submitted now or later). */
    public static long points(PendingJob job, long now) {
        long waited = Math.max(0, now - job.submittedAtSeconds());
        return Math.min(MAX_POINTS, waited / SECONDS_PER_POINT);
    }

    /** Priority plus waiting points (larger first), then the older submission, then the name for determinism. */
    public static Comparator<PendingJob> order(long now) {
        return Comparator.comparingLong((PendingJob j) -> j.priority() + points(j, now)).reversed()
                .thenComparingLong(PendingJob::submittedAtSeconds)
                .thenComparing(PendingJob::name);
    }
}
