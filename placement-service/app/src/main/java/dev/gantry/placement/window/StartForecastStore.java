package dev.gantry.placement.window;

import dev.gantry.contracts.events.EventCodec;
import io.quarkus.runtime.configuration.DurationConverter;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.RowSet;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import org.eclipse.microprofile.config.inject.ConfigProperty;

/**
 * The leading replica's last start-time forecast in the placement database (table
 * {@code start_forecast}, V113, one row replaced at each recompute), so that every replica answers
 * {@code GET /v1/start-forecasts}: the leader writes what it computed, any replica reads it. A
 * forecast older than {@link #staleAfter} (three forecast periods: the larger of the window and the
 * forecast's min-interval) is reported stale: its jobs' start times unknown, with why, since the
 * leader stopped forecasting (it died, lost its lease, or its windows stopped).
 */
@ApplicationScoped
public class StartForecastStore {

    /** How many forecast periods a forecast is good for. */
    static final int PERIODS_FRESH = 3;

    /**
     * A page of forecasts: {@code computedAt} null when none was ever stored; {@code stale} with
     * {@code staleReason} when the stored one is too old (its items then carry no start time).
     */
    public record Page(Instant computedAt, int maxJobs, List<StartForecasts.Entry> items, boolean stale, String staleReason) {
    }

    /** The stored document: the entries of one snapshot. */
    record Stored(List<StartForecasts.Entry> entries) {
    }

    private final Pool pool;
    private final Duration staleAfter;
    private final int maxJobs;

    @Inject
    public StartForecastStore(Pool pool,
            @ConfigProperty(name = "gantry.placement.window", defaultValue = "2s") String window,
            @ConfigProperty(name = "gantry.placement.forecast.min-interval", defaultValue = "5s") Duration minInterval,
            @ConfigProperty(name = "gantry.placement.forecast.max-jobs", defaultValue = "500") int maxJobs) {
        this(pool, windowPeriod(window), minInterval, maxJobs);
    }

    /** @param window the window's period, null when windows are off */
    public StartForecastStore(Pool pool, Duration window, Duration minInterval, int maxJobs) {
        this.pool = pool;
        this.staleAfter = (window != null && window.compareTo(minInterval) > 0 ? window : minInterval).multipliedBy(PERIODS_FRESH);
        this.maxJobs = maxJobs;
    }

    /** The window's period as the scheduler reads it; null for {@code off} or {@code disabled} (no windows). */
    private static Duration windowPeriod(String every) {
        String v = every == null ? "" : every.trim();
        if (v.equalsIgnoreCase("off") || v.equalsIgnoreCase("disabled") || v.isEmpty()) {
            return null;
        }
        return DurationConverter.parseDuration(v);
    }

    /** Older forecasts than this are stale. */
    public Duration staleAfter() {
        return staleAfter;
    }

    /** Replaces the stored forecast with {@code snap} (the leader's; the caller checks it leads). */
    public Uni<Void> save(StartForecasts.Snapshot snap, Instant writtenAt) {
        String entries = EventCodec.toJson(new Stored(List.copyOf(snap.byJob().values())));
        return pool.preparedQuery("""
                insert into start_forecast (id, computed_at, written_at, max_jobs, entries) values (1, $1, $2, $3, $4)
                on conflict (id) do update set computed_at = excluded.computed_at, written_at = excluded.written_at,
                    max_jobs = excluded.max_jobs, entries = excluded.entries""")
                .execute(Tuple.of(offset(snap.computedAt()), offset(writtenAt), snap.maxJobs(), entries))
                .replaceWithVoid();
    }

    /** The stored forecasts of {@code jobs} (all when empty), soonest first, as of {@code now}. */
    public Uni<Page> read(List<UUID> jobs, Instant now) {
        return pool.query("select computed_at, max_jobs, entries from start_forecast where id = 1").execute()
                .map(rows -> page(rows, jobs, now));
    }

    private Page page(RowSet<Row> rows, List<UUID> jobs, Instant now) {
        if (rows.size() == 0) {
            return new Page(null, maxJobs, List.of(), false, null);
        }
        Row row = rows.iterator().next();
        OffsetDateTime computed = row.getOffsetDateTime("computed_at");
        List<StartForecasts.Entry> entries = EventCodec.fromJson(row.getString("entries"), Stored.class).entries();
        return page(computed == null ? null : computed.toInstant(), row.getInteger("max_jobs"), entries, jobs, now, staleAfter);
    }

    /**
     * The page of {@code entries} for {@code jobs} (all when empty): when the forecast was computed
     * more than {@code staleAfter} before {@code now}, stale, and each job's start unknown with why.
     */
    static Page page(Instant computedAt, int maxJobs, List<StartForecasts.Entry> entries, List<UUID> jobs, Instant now, Duration staleAfter) {
        List<StartForecasts.Entry> items;
        if (jobs == null || jobs.isEmpty()) {
            items = entries.stream().sorted(BY_START).toList();
        } else {
            Map<UUID, StartForecasts.Entry> byJob = new java.util.HashMap<>();
            entries.forEach(e -> byJob.put(e.jobId(), e));
            items = jobs.stream().distinct().map(byJob::get).filter(Objects::nonNull).toList();
        }
        if (computedAt == null || !computedAt.plus(staleAfter).isBefore(now)) {
            return new Page(computedAt, maxJobs, items, false, null);
        }
        String why = "the last start-time forecast is of " + computedAt + ", " + Duration.between(computedAt, now).toSeconds()
                + " s ago, older than " + staleAfter.toSeconds() + " s (" + PERIODS_FRESH
                + " forecast periods): the leading placement replica has not forecast since";
        List<StartForecasts.Entry> unknown = items.stream()
                .map(e -> new StartForecasts.Entry(e.jobId(), null, "unknown", List.of(), "unknown: " + why)).toList();
        return new Page(computedAt, maxJobs, unknown, true, why);
    }

    /** Soonest first, unknown last. */
    private static final Comparator<StartForecasts.Entry> BY_START = Comparator
            .comparing(StartForecasts.Entry::startAt, Comparator.nullsLast(Comparator.naturalOrder()))
            .thenComparing(StartForecasts.Entry::jobId);

    private static OffsetDateTime offset(Instant at) {
        return at == null ? null : at.atOffset(ZoneOffset.UTC);
    }
}
