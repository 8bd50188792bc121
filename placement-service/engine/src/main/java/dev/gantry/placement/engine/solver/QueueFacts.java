package dev.gantry.placement.engine.solver;

/**
 * A queue as the score sees it (milli-GPUs). {@code subtreePinnedMilli}: pinned running work of
 * the queue and its children (capability counts children); {@code pinnedMilli}: pinned work of
 * this queue alone (reclaim looks at the victim's own queue, as the checker does).
 * {@code demandMilli}: the queue's own running and waiting work; {@code guaranteeWeight}: what one
 * GPU of guarantee shortfall costs (per 1000 milli), more than any job's priority weight, so
 * restoring a queue's guarantee outweighs the priorities of the jobs of other queues.
 * {@code guaranteeMilli}: what reclaim restores and protects, the queue's guarantee; with reclaim
 * toward the fair share, the larger of its guarantee and its fair share.
 */
public record QueueFacts(
        String name,
        long capabilityMilli,
        long beforeMilli,
        long subtreeBeforeMilli,
        long subtreePinnedMilli,
        long pinnedMilli,
        long guaranteeMilli,
        boolean reclaimable,
        long deservedMilli,
        long demandMilli,
        long guaranteeWeight) {

    /** Without the guarantee term's facts (no demand counted: the queue never has a guarantee shortfall). */
    public QueueFacts(String name, long capabilityMilli, long beforeMilli, long subtreeBeforeMilli, long subtreePinnedMilli, long pinnedMilli,
            long guaranteeMilli, boolean reclaimable, long deservedMilli) {
        this(name, capabilityMilli, beforeMilli, subtreeBeforeMilli, subtreePinnedMilli, pinnedMilli, guaranteeMilli, reclaimable,
                deservedMilli, 0, 0);
    }

    /**
     * What of its guarantee the queue can use: its guarantee, or all it runs and waits for when that
     * is less. Held below this after a plan, the queue has a guarantee shortfall.
     */
    public long guaranteeNeed() {
        return Math.min(guaranteeMilli, demandMilli);
    }

    /** After the plan the subtree may hold at most this: above capability only if it held more before. */
    public long capabilityLimit() {
        return Math.max(capabilityMilli, subtreeBeforeMilli);
    }

    /** Borrowed GPUs (above the guarantee before the plan) may be reclaimed. */
    public boolean reclaimEligible() {
        return reclaimable && beforeMilli > guaranteeMilli;
    }

    /** Reclaim must leave the victim's queue at least this much. */
    public long reclaimFloor() {
        return Math.min(guaranteeMilli, beforeMilli);
    }
}
