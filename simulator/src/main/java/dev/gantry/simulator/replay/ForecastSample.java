package dev.gantry.simulator.replay;

/**
 * One start-time forecast of a waiting job, set against when it did start.
 *
 * @param when        {@code "submission"} (the first window that left it waiting, or placed it) or
 *                    {@code "1h"} (the first window an hour or more after its submission, if it still waited)
 * @param madeAt      the window's time
 * @param predicted   the forecast start (seconds), -1 when the forecast was unknown
 * @param actual      its first start, -1 when it never started
 * @param firstWindow it was placed in the window that made the forecast (the forecast is then its start)
 */
public record ForecastSample(String job, String when, long madeAt, long predicted, long actual, boolean firstWindow) {

    public boolean known() {
        return predicted >= 0 && actual >= 0;
    }

    /** |predicted - actual| in seconds (only when {@link #known}). */
    public long error() {
        return Math.abs(predicted - actual);
    }
}
