package dev.gantry.placement.engine.solver;

/**
 * A queue as the score sees it (milli-GPUs). {@code subtreePinnedMilli}: pinned running work of
 * the queue and its children (capability counts children); {@code pinnedMilli}: pinned work of
 * this queue alone (reclaim looks at the victim's own queue, as the checker does).
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
        long deservedMilli) {

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
