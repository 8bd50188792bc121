package dev.gantry.placement.engine.forecast;

import java.util.List;

/**
 * When a waiting job is expected to start, and why then.
 *
 * @param job          the pending job's name
 * @param startSeconds the expected start (absolute seconds, the scenario's clock); null when {@link Basis#UNKNOWN}
 * @param basis        what the time rests on
 * @param waitsFor     the jobs that must end first (running ones, or waiting ones expected to start and end before it),
 *                     earliest expected end first, at most {@link StartForecaster#MAX_WAITS_FOR}
 * @param note         the basis in words, for users: "reserved", "after 3 jobs end", "unknown: ..."
 */
public record StartForecast(String job, Long startSeconds, Basis basis, List<String> waitsFor, String note) {

    /** What a forecast rests on. */
    public enum Basis {
        /** It fits now: the next window or fast path should place it. */
        NOW,
        /** It holds a reservation (EASY's head of the line): it starts when the jobs on the reserved GPUs end. */
        RESERVATION,
        /** Replaying the planner forward over the estimated ends of running (and earlier forecast) jobs. */
        RELEASES,
        /** Not within the horizon, too far back in line, or waiting for jobs without an estimate. */
        UNKNOWN
    }

    public StartForecast {
        waitsFor = List.copyOf(waitsFor);
    }

    static StartForecast unknown(String job, String why) {
        return new StartForecast(job, null, Basis.UNKNOWN, List.of(), "unknown: " + why);
    }
}
