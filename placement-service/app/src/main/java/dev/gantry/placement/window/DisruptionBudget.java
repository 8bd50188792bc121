package dev.gantry.placement.window;

import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.eclipse.microprofile.config.inject.ConfigProperty;

/**
 * How much defragmentation may disturb running work ({@code gantry.placement.migration.*}): moves
 * per hour cluster-wide and per queue, a minimum time between two moves of one job, and no move
 * while a job is protected after its placement. The window offers the solver only the jobs it may
 * still move ({@link #offer}); the binder checks again, against the moves recorded, before it
 * records a plan's moves ({@link #refusal}), since a plan may move more jobs than the hour has left.
 */
@ApplicationScoped
public class DisruptionBudget {

    /** Moves started within the last hour: cluster-wide and by queue. */
    public record Spent(long total, Map<String, Long> byQueue) {
        public static final Spent NONE = new Spent(0, Map.of());

        long ofQueue(String queue) {
            return byQueue.getOrDefault(queue, 0L);
        }

        Spent plus(String queue) {
            Map<String, Long> next = new HashMap<>(byQueue);
            next.merge(queue, 1L, Long::sum);
            return new Spent(total + 1, next);
        }
    }

    private final Pool pool;
    private final boolean enabled;
    private final int maxPerHour;
    private final int queueMaxPerHour;
    private final Map<String, Integer> queueLimits;
    private final Duration minInterval;
    private final Duration protection;

    public DisruptionBudget(Pool pool,
            @ConfigProperty(name = "gantry.placement.migration.enabled", defaultValue = "true") boolean enabled,
            @ConfigProperty(name = "gantry.placement.migration.max-per-hour", defaultValue = "6") int maxPerHour,
            @ConfigProperty(name = "gantry.placement.migration.queue-max-per-hour", defaultValue = "3") int queueMaxPerHour,
            @ConfigProperty(name = "gantry.placement.migration.queue-limits") Optional<String> queueLimits,
            @ConfigProperty(name = "gantry.placement.migration.min-interval", defaultValue = "1h") Duration minInterval,
            @ConfigProperty(name = "gantry.placement.migration.protection", defaultValue = "10m") Duration protection) {
        if (maxPerHour < 0 || queueMaxPerHour < 0) {
            throw new IllegalArgumentException("gantry.placement.migration.max-per-hour and queue-max-per-hour must be 0 or more");
        }
        this.pool = pool;
        this.enabled = enabled;
        this.maxPerHour = maxPerHour;
        this.queueMaxPerHour = queueMaxPerHour;
        this.queueLimits = parseQueueLimits(queueLimits.orElse(""));
        this.minInterval = minInterval;
        this.protection = protection;
    }

    /** Whether moves are allowed at all (off: the solver is never offered one). */
    boolean enabled() {
        return enabled && maxPerHour > 0;
    }

    /** The moves started within the hour before {@code now}, from {@code job_migration}. */
    Uni<Spent> spent(Instant now) {
        if (!enabled()) {
            return Uni.createFrom().item(Spent.NONE);
        }
        return pool.preparedQuery("select queue, count(*) from job_migration where started_at > $1 group by queue")
                .execute(Tuple.of(OffsetDateTime.ofInstant(now.minus(Duration.ofHours(1)), ZoneOffset.UTC)))
                .map(rows -> {
                    Map<String, Long> byQueue = new LinkedHashMap<>();
                    long total = 0;
                    for (Row r : rows) {
                        byQueue.put(r.getString(0), r.getLong(1));
                        total += r.getLong(1);
                    }
                    return new Spent(total, byQueue);
                });
    }

    /** Moves the cluster-wide hourly budget still allows, given those started within the hour. */
    int movesLeft(Spent spent) {
        return enabled() ? (int) Math.max(0, maxPerHour - spent.total()) : 0;
    }

    /** The running jobs, each marked movable when the budget lets the solver move it now. */
    List<ScenarioBuilder.Placed> offer(Instant now, List<ScenarioBuilder.Placed> placed, Spent spent) {
        List<ScenarioBuilder.Placed> out = new ArrayList<>(placed.size());
        for (ScenarioBuilder.Placed p : placed) {
            boolean wants = p.spec() != null && p.spec().migratable();
            out.add(wants && refusal(now, p.queue(), p.boundAt(), p.lastMigratedAt(), spent) == null ? p.withMovable(true) : p);
        }
        return out;
    }

    /** Why a job of {@code queue}, placed at {@code boundAt} and last moved at {@code lastMoved}, may not move now; null when it may. */
    String refusal(Instant now, String queue, Instant boundAt, Instant lastMoved, Spent spent) {
        if (!enabled()) {
            return "migrations are off (gantry.placement.migration.enabled)";
        }
        if (boundAt != null && boundAt.plus(protection).isAfter(now)) {
            return "protected after its placement until " + boundAt.plus(protection);
        }
        if (lastMoved != null && lastMoved.plus(minInterval).isAfter(now)) {
            return "moved at " + lastMoved + ", not again before " + lastMoved.plus(minInterval);
        }
        if (spent.total() >= maxPerHour) {
            return "the cluster's " + maxPerHour + " moves per hour are spent";
        }
        int queueMax = queueLimits.getOrDefault(queue, queueMaxPerHour);
        if (spent.ofQueue(queue) >= queueMax) {
            return "queue " + queue + "'s " + queueMax + " moves per hour are spent";
        }
        return null;
    }

    /** {@code queue=n} pairs separated by commas: the moves per hour of those queues (0: never moved). */
    static Map<String, Integer> parseQueueLimits(String text) {
        Map<String, Integer> limits = new LinkedHashMap<>();
        for (String pair : text.split(",")) {
            if (pair.isBlank()) {
                continue;
            }
            int eq = pair.lastIndexOf('=');
            try {
                if (eq <= 0) {
                    throw new NumberFormatException();
                }
                int n = Integer.parseInt(pair.substring(eq + 1).trim());
                if (n < 0) {
                    throw new NumberFormatException();
                }
                limits.put(pair.substring(0, eq).trim(), n);
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("gantry.placement.migration.queue-limits: expected queue=moves per hour (0 or more), got \""
                        + pair.trim() + "\"");
            }
        }
        return Map.copyOf(limits);
    }
}
