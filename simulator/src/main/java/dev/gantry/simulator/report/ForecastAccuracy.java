package dev.gantry.simulator.report;

import dev.gantry.simulator.replay.ForecastSample;
import dev.gantry.simulator.replay.ReplayResult;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * How close the start-time forecasts came: median and p90 of |predicted - actual| start, for the
 * forecasts made when a job was first seen and an hour after its submission. A job placed in the
 * window that first saw it has its start as its forecast (error 0); the jobs a forecast is for are
 * those left waiting, reported apart. Unknown forecasts count in the coverage, not in the errors.
 * The baseline is the guess without a forecast, "it starts now" (the error is the rest of its wait),
 * over the same known forecasts of the jobs that waited.
 */
public record ForecastAccuracy(String policy, String when, int forecasts, int placedAtOnce, int waiting, int known, double medianSeconds,
        double p90Seconds, double medianAllSeconds, double p90AllSeconds, double baselineMedianSeconds, double baselineP90Seconds) {

    public static List<ForecastAccuracy> of(ReplayResult r) {
        if (r.forecasts().isEmpty()) {
            return List.of();
        }
        return List.of(of(r.policy(), "submission", r.forecasts()), of(r.policy(), "1h", r.forecasts()));
    }

    static ForecastAccuracy of(String policy, String when, List<ForecastSample> all) {
        List<ForecastSample> made = all.stream().filter(s -> s.when().equals(when)).toList();
        List<ForecastSample> waited = made.stream().filter(s -> !s.firstWindow()).toList();
        double[] waitedErrors = waited.stream().filter(ForecastSample::known).mapToDouble(ForecastSample::error).toArray();
        double[] allErrors = made.stream().filter(ForecastSample::known).mapToDouble(ForecastSample::error).toArray();
        double[] startsNow = waited.stream().filter(ForecastSample::known).mapToDouble(s -> Math.abs(s.actual() - s.madeAt())).toArray();
        return new ForecastAccuracy(policy, when, made.size(), made.size() - waited.size(), waited.size(), waitedErrors.length,
                Stats.percentile(waitedErrors, 50), Stats.percentile(waitedErrors, 90), Stats.percentile(allErrors, 50),
                Stats.percentile(allErrors, 90), Stats.percentile(startsNow, 50), Stats.percentile(startsNow, 90));
    }

    public String line() {
        return String.format(Locale.ROOT, "start forecast %-9s at %-10s: %6d jobs (%d placed at once); of the %d waiting, %d known (%.1f%%): "
                        + "|error| median %.0f s, p90 %.0f s (\"starts now\": median %.0f s, p90 %.0f s); over all known: median %.0f s, "
                        + "p90 %.0f s%n",
                policy, when, forecasts, placedAtOnce, waiting, known, waiting == 0 ? 100.0 : 100.0 * known / waiting, medianSeconds,
                p90Seconds, baselineMedianSeconds, baselineP90Seconds, medianAllSeconds, p90AllSeconds);
    }

    public Map<String, Object> toMap() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("when", when);
        m.put("forecasts", forecasts);
        m.put("placedAtOnce", placedAtOnce);
        m.put("waiting", waiting);
        m.put("known", known);
        m.put("medianErrorSeconds", medianSeconds);
        m.put("p90ErrorSeconds", p90Seconds);
        m.put("medianErrorAllSeconds", medianAllSeconds);
        m.put("p90ErrorAllSeconds", p90AllSeconds);
        m.put("startsNowMedianErrorSeconds", baselineMedianSeconds);
        m.put("startsNowP90ErrorSeconds", baselineP90Seconds);
        return m;
    }
}
