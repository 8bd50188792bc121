package dev.gantry.placement.window;

import dev.gantry.contracts.events.EventCodec;
import dev.gantry.contracts.jobs.JobQueued;
import dev.gantry.placement.engine.domain.Plan;
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
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.UUID;
import org.jboss.logging.Logger;

/**
 * How long gangs of each shape waited (table {@code gang_wait}, V112): what scheduled consolidation
 * makes room for. A job whose pods ask for {@value #MIN_GPUS_PER_POD} or more whole GPUs (the ones
 * that need a whole node or an NVLink island) leaves a row when it is bound ({@link #recordBound});
 * {@link #longest} ranks the shapes by the waits of the jobs bound within the lookback plus those of
 * the jobs of that shape waiting now, and gives each shape's longest waiter as its example.
 */
@ApplicationScoped
public class GangWaits {

    private static final Logger LOG = Logger.getLogger(GangWaits.class);
    /** Pods of fewer whole GPUs fit in whatever is left over: no node is emptied for them. */
    static final int MIN_GPUS_PER_POD = 2;

    /** One shape's waits: their sum over the lookback (bound and still waiting), how many jobs, and its longest waiter's spec. */
    public record Waited(String shape, long waitedSeconds, int jobs, JobQueued example) {
    }

    private final Pool pool;

    public GangWaits(Pool pool) {
        this.pool = pool;
    }

    /** Whether consolidation would make room for this job's shape: some pod asks for two or more whole GPUs. */
    static boolean wantsRoom(JobQueued spec) {
        return spec.taskGroups().stream().anyMatch(g -> g.gpuMilli() == null && g.gpusPerReplica() >= MIN_GPUS_PER_POD);
    }

    /** The shape a job's wait is counted under: pods x GPUs per task group, GPU models, topology, network scope. */
    static String shapeOf(JobQueued spec) {
        StringBuilder sb = new StringBuilder();
        spec.taskGroups().forEach(g -> sb.append(sb.isEmpty() ? "" : "+").append(g.replicas()).append('x')
                .append(g.gpuMilli() != null ? g.gpuMilli() + "m" : Integer.toString(g.gpusPerReplica())));
        if (spec.gpuModels() != null && !spec.gpuModels().isEmpty()) {
            sb.append(' ').append(new TreeSet<>(spec.gpuModels()));
        }
        if (spec.gpuTopology() != null && !spec.gpuTopology().equals("any")) {
            sb.append(' ').append(spec.gpuTopology());
        }
        if (spec.network() != null && spec.network().required() != null && !spec.network().required().equals("any")) {
            sb.append(" within ").append(spec.network().required());
        }
        return sb.toString();
    }

    /** Leaves a row for each job of {@code plan} that is now bound and wants room; never fails the caller (a lost row is one wait fewer). */
    Uni<Void> recordBound(Plan plan) {
        if (plan.placements().isEmpty()) {
            return Uni.createFrom().voidItem();
        }
        UUID[] ids = plan.placements().stream().map(p -> UUID.fromString(p.job())).toArray(UUID[]::new);
        return pool.preparedQuery("select job_id, spec, submitted_at, bound_at from running_job where job_id = any($1)")
                .execute(Tuple.of(ids))
                .chain(rows -> {
                    List<Tuple> batch = new ArrayList<>();
                    for (Row r : rows) {
                        JobQueued spec = EventCodec.fromJson(r.getString("spec"), JobQueued.class);
                        if (!wantsRoom(spec)) {
                            continue;
                        }
                        OffsetDateTime bound = r.getOffsetDateTime("bound_at");
                        long waited = Math.max(0, Duration.between(r.getOffsetDateTime("submitted_at"), bound).toMillis());
                        batch.add(Tuple.of(r.getUUID("job_id"), shapeOf(spec), waited, bound, r.getString("spec")));
                    }
                    if (batch.isEmpty()) {
                        return Uni.createFrom().voidItem();
                    }
                    // placed again after a requeue: the longer wait, from its first submission, is kept
                    return pool.preparedQuery("insert into gang_wait (job_id, shape, waited_ms, bound_at, spec) values ($1, $2, $3, $4, $5) "
                            + "on conflict (job_id) do update set waited_ms = excluded.waited_ms, bound_at = excluded.bound_at")
                            .executeBatch(batch).replaceWithVoid();
                })
                .onFailure().recoverWithItem(e -> {
                    LOG.warnf("waits of %d bound jobs not recorded: %s", ids.length, e.toString());
                    return null;
                });
    }

    /**
     * The shapes that waited longest, at most {@code limit}: waits of the jobs bound within
     * {@code lookback} before {@code now} plus the waits so far of the jobs waiting now, summed per
     * shape (a shape that waits long and often first). Rows older than the lookback are deleted.
     */
    Uni<List<Waited>> longest(Instant now, Duration lookback, int limit) {
        OffsetDateTime since = OffsetDateTime.ofInstant(now.minus(lookback), ZoneOffset.UTC);
        return pool.preparedQuery("delete from gang_wait where bound_at < $1").execute(Tuple.of(since))
                .chain(() -> pool.preparedQuery("select spec, waited_ms from gang_wait where bound_at >= $1").execute(Tuple.of(since)))
                .chain(bound -> pool.query("select spec, submitted_at from pending_job").execute().map(pending -> {
                    Map<String, long[]> totals = new LinkedHashMap<>(); // shape -> {millis, jobs, longest}
                    Map<String, JobQueued> examples = new LinkedHashMap<>();
                    for (Row r : bound) {
                        add(totals, examples, EventCodec.fromJson(r.getString("spec"), JobQueued.class), r.getLong("waited_ms"));
                    }
                    for (Row r : pending) {
                        JobQueued spec = EventCodec.fromJson(r.getString("spec"), JobQueued.class);
                        add(totals, examples, spec, Math.max(0, Duration.between(r.getOffsetDateTime("submitted_at").toInstant(), now).toMillis()));
                    }
                    List<Waited> ranked = new ArrayList<>();
                    totals.forEach((shape, t) -> ranked.add(new Waited(shape, t[0] / 1000, (int) t[1], examples.get(shape))));
                    ranked.sort(Comparator.comparingLong(Waited::waitedSeconds).reversed().thenComparing(Waited::shape));
                    return ranked.subList(0, Math.min(limit, ranked.size()));
                }));
    }

    private static void add(Map<String, long[]> totals, Map<String, JobQueued> examples, JobQueued spec, long waitedMillis) {
        if (!wantsRoom(spec)) {
            return;
        }
        String shape = shapeOf(spec);
        long[] t = totals.computeIfAbsent(shape, k -> new long[3]);
        t[0] += waitedMillis;
        t[1]++;
        if (waitedMillis >= t[2]) {
            t[2] = waitedMillis;
            examples.put(shape, spec);
        }
    }
}
