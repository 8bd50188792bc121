package dev.gantry.quota.domain;

/**
 * Historic usage with exponential decay, as Slurm's fair-share does: usage older by one half-life
 * counts half as much. A queue accrues its dominant share of the cluster (its largest fraction of
 * the cluster's GPUs, CPU or memory it holds) per hour; a half-life of zero forgets at once.
 */
public final class UsageDecay {

    private UsageDecay() {
    }

    /**
     * @param previous         decayed usage at the last update (dominant-share hours)
     * @param elapsedSeconds   time since then
     * @param halfLifeSeconds  the half-life; 0 or less disables historic usage
     * @param dominantShare    the share held during the interval (0..1)
     */
    public static double advance(double previous, double elapsedSeconds, double halfLifeSeconds, double dominantShare) {
        if (halfLifeSeconds <= 0) {
            return 0;
        }
        double elapsed = Math.max(0, elapsedSeconds);
        double decay = Math.pow(2, -elapsed / halfLifeSeconds);
        return previous * decay + Math.max(0, dominantShare) * elapsed / 3600.0;
    }

    /** The largest fraction of the cluster's capacity that {@code held} amounts to (resources the cluster lacks are skipped). */
    public static double dominantShare(Amounts held, Amounts capacity) {
        double share = 0;
        for (int r = 0; r < Amounts.DIMENSIONS; r++) {
            if (capacity.get(r) > 0) {
                share = Math.max(share, held.get(r) / capacity.get(r));
            }
        }
        return share;
    }
}
