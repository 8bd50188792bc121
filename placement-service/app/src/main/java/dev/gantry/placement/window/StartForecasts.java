package dev.gantry.placement.window;

import dev.gantry.placement.cluster.Leadership;
import dev.gantry.placement.engine.domain.Plan;
import dev.gantry.placement.engine.domain.Scenario;
import dev.gantry.placement.engine.forecast.StartForecast;
import dev.gantry.placement.engine.forecast.StartForecaster;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.function.ToLongFunction;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.jboss.logging.Logger;

/**
 * A start time for every waiting job, as of a recent window: the engine's {@link StartForecaster}
 * on the window's scenario with its plan applied and the reservations' runtime estimates, so the
 * head's forecast is its reservation. Recomputed after a window that planned (off the window's
 * path, one at a time, at most once per {@code min-interval}: a window finding the last one still
 * running, or too recent, leaves it be), kept in memory and stored in the placement database
 * ({@link StartForecastStore}), from which every replica serves {@code GET /v1/start-forecasts};
 * admission asks for it when it shows a job.
 * Bounded: the first {@code max-jobs} jobs in line, {@code horizon} ahead, {@code max-steps}
 * release times; a job further back has no entry (admission says so).
 */
@ApplicationScoped
public class StartForecasts {

    private static final Logger LOG = Logger.getLogger(StartForecasts.class);

    /** One job's forecast: {@code startAt} null when unknown. */
    public record Entry(UUID jobId, Instant startAt, String basis, List<UUID> waitsFor, String note) {
    }

    /** The forecasts of one window. */
    public record Snapshot(Instant computedAt, int maxJobs, Map<UUID, Entry> byJob) {
    }

    private final StartForecaster forecaster;
    private final int maxJobs;
    /** At most one forecast per this interval: with hundreds of jobs waiting one takes a second or two of CPU. */
    private final long minIntervalNanos;
    private volatile long lastStartedNanos;
    private final Timer took;
    private volatile Snapshot current;
    private final StartForecastStore store;
    private final Leadership leadership;
    /** When the empty forecast was last stored while nothing waits (it is refreshed so it does not turn stale). */
    private volatile Instant emptyStoredAt;

    public StartForecasts(MeterRegistry registry, StartForecastStore store, Leadership leadership,
            @ConfigProperty(name = "gantry.placement.forecast.max-jobs", defaultValue = "500") int maxJobs,
            @ConfigProperty(name = "gantry.placement.forecast.horizon", defaultValue = "7d") Duration horizon,
            @ConfigProperty(name = "gantry.placement.forecast.max-steps", defaultValue = "2000") int maxSteps,
            @ConfigProperty(name = "gantry.placement.forecast.min-interval", defaultValue = "5s") Duration minInterval,
            @ConfigProperty(name = "gantry.placement.reservations", defaultValue = "1") int reservations,
            @ConfigProperty(name = "gantry.placement.reservation.per-queue", defaultValue = "false") boolean perQueue) {
        // with reservations off the window plans without any; the forecast still assumes EASY's one (its best guess)
        this.forecaster = new StartForecaster(maxJobs, horizon.toSeconds(), maxSteps, Math.max(1, reservations), perQueue);
        this.maxJobs = maxJobs;
        this.store = store;
        this.leadership = leadership;
        this.minIntervalNanos = minInterval.toNanos();
        this.lastStartedNanos = System.nanoTime() - minIntervalNanos;
        this.current = new Snapshot(null, maxJobs, Map.of());
        this.took = Timer.builder("gantry.placement.forecast").description("computing the start-time forecast of the waiting jobs")
                .register(registry);
        Gauge.builder("gantry.placement.forecast.jobs", this, f -> f.current.byJob().size())
                .description("waiting jobs with a start-time forecast entry").register(registry);
    }

    /** The last forecasts. */
    public Snapshot current() {
        return current;
    }

    /** Whether the last forecast began at least {@code min-interval} ago (then the caller may start one; this marks it begun). */
    boolean due() {
        long now = System.nanoTime();
        if (now - lastStartedNanos < minIntervalNanos) {
            return false;
        }
        lastStartedNanos = now;
        return true;
    }

    /** Nothing waits: no forecast. */
    void clear(Instant now) {
        if (!current.byJob().isEmpty()) {
            current = new Snapshot(now, maxJobs, Map.of());
            emptyStoredAt = null;
        }
        // stored again now and then, so the other replicas do not report an empty forecast as stale
        Instant stored = emptyStoredAt;
        if (stored == null || !stored.plus(store.staleAfter().dividedBy(StartForecastStore.PERIODS_FRESH)).isAfter(now)) {
            emptyStoredAt = now;
            store(new Snapshot(now, maxJobs, Map.of()));
        }
    }

    /** Stores {@code snap} for every replica when this one leads; never fails the caller (the next one replaces it). */
    private void store(Snapshot snap) {
        if (!leadership.leading()) {
            return;
        }
        store.save(snap, Instant.now()).subscribe().with(ignored -> {
        }, e -> LOG.warnf("start-time forecast not stored (the other replicas keep the last one): %s", e.toString()));
    }

    /**
     * Forecasts the jobs {@code plan} (null: no valid plan) leaves waiting in {@code scenario}, with the
     * running jobs' estimated {@code ends}; blocking (CPU), the caller runs it off the event loop.
     */
    void recompute(Scenario scenario, Plan plan, ToLongFunction<String> ends) {
        long start = System.nanoTime();
        try {
            Map<String, StartForecast> forecasts = forecaster.forecast(scenario, plan, ends);
            Map<UUID, Entry> byJob = new HashMap<>();
            for (StartForecast f : forecasts.values()) {
                if (forecaster.beyondLine(f)) {
                    continue; // beyond max-jobs: no entry, admission says so
                }
                byJob.put(UUID.fromString(f.job()), new Entry(UUID.fromString(f.job()),
                        f.startSeconds() == null ? null : Instant.ofEpochSecond(f.startSeconds()),
                        f.basis().name().toLowerCase(java.util.Locale.ROOT),
                        f.waitsFor().stream().filter(StartForecasts::isJobId).map(UUID::fromString).toList(), f.note()));
            }
            current = new Snapshot(Instant.ofEpochSecond(scenario.nowSeconds()), maxJobs, Map.copyOf(byJob));
            emptyStoredAt = null;
            store(current);
        } catch (RuntimeException e) {
            LOG.warnf(e, "start-time forecast failed; the last one stays until the next window");
        } finally {
            took.record(System.nanoTime() - start, TimeUnit.NANOSECONDS);
        }
    }

    /** Engine job names are job ids; a reservation's placeholder is not. */
    private static boolean isJobId(String name) {
        try {
            UUID.fromString(name);
            return true;
        } catch (IllegalArgumentException e) {
            return false;
        }
    }
}
