package dev.gantry.placement.window;

import dev.gantry.contracts.jobs.JobQueued;
import dev.gantry.placement.cluster.BinderMode;
import io.quarkus.hibernate.reactive.panache.Panache;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Row;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.jboss.logging.Logger;

/**
 * The runtimes of jobs that completed here (table {@code job_runtime}, V44): each completion adds
 * its runtime under two keys ({@link RuntimeEstimates#jobKey}, {@link RuntimeEstimates#shapeKey}),
 * the latest {@value #KEPT} per key kept. The windows' {@link RuntimeEstimates} read the table again
 * at most every {@value #REFRESH_SECONDS} seconds and use the {@link RuntimeEstimates#PERCENTILE}
 * of each key's runtimes for a job that gives no estimate.
 */
@ApplicationScoped
public class RuntimeHistory {

    private static final Logger LOG = Logger.getLogger(RuntimeHistory.class);
    static final int KEPT = 20;
    static final long REFRESH_SECONDS = 10;

    private final Pool pool;
    private final double scale;
    private final Duration defaultRuntime;
    private volatile RuntimeEstimates current;
    private volatile long readAt = Long.MIN_VALUE;

    /**
     * @param speedup the standalone executor's: it runs a job for its estimate times this, so a job's own
     *                estimate is scaled the same way (on a real cluster, kubernetes mode, it is not)
     */
    public RuntimeHistory(Pool pool, BinderMode mode,
            @ConfigProperty(name = "gantry.placement.standalone.speedup", defaultValue = "0.01") double speedup,
            @ConfigProperty(name = "gantry.placement.reservation.default-runtime", defaultValue = "1h") Duration defaultRuntime) {
        this.pool = pool;
        this.scale = mode.kubernetes() ? 1 : speedup;
        this.defaultRuntime = defaultRuntime;
        this.current = new RuntimeEstimates(scale, defaultRuntime, Map.of());
    }

    /** Records a completed job's runtime. Call inside the transaction that releases it. */
    public Uni<Void> record(JobQueued spec, Duration runtime) {
        long millis = Math.max(0, runtime.toMillis());
        return Panache.getSession().chain(session -> {
            Uni<Void> chain = Uni.createFrom().voidItem();
            for (String key : List.of(RuntimeEstimates.jobKey(spec), RuntimeEstimates.shapeKey(spec))) {
                chain = chain.chain(() -> session.createNativeQuery("insert into job_runtime (key, runtimes_millis, updated_at) "
                                + "values (?1, array[cast(?2 as bigint)], now()) on conflict (key) do update "
                                + "set runtimes_millis = array(select m from unnest(array[cast(?2 as bigint)] || job_runtime.runtimes_millis) "
                                + "with ordinality as t(m, i) order by i limit " + KEPT + "), updated_at = now()")
                        .setParameter(1, key).setParameter(2, millis).executeUpdate().replaceWithVoid());
            }
            return chain;
        });
    }

    /**
     * The estimates as of the last read of the history; when that is older than
     * {@value #REFRESH_SECONDS} s the table is read again in the background (the next call sees it).
     */
    public RuntimeEstimates current() {
        long now = System.nanoTime();
        if (readAt == Long.MIN_VALUE || now - readAt >= Duration.ofSeconds(REFRESH_SECONDS).toNanos()) {
            readAt = now;
            pool.query("select key, array_to_string(runtimes_millis, ',') from job_runtime").execute().subscribe().with(rows -> {
                Map<String, Long> learned = new HashMap<>();
                for (Row r : rows) {
                    List<Long> runtimes = new ArrayList<>();
                    for (String m : r.getString(1).split(",")) {
                        if (!m.isBlank()) {
                            runtimes.add(Long.parseLong(m.trim()));
                        }
                    }
                    Long p = RuntimeEstimates.percentile(runtimes, RuntimeEstimates.PERCENTILE);
                    if (p != null) {
                        learned.put(r.getString(0), Math.max(1, (p + 999) / 1000));
                    }
                }
                current = new RuntimeEstimates(scale, defaultRuntime, learned);
            }, e -> LOG.warnf("runtime history not read (the last one is used): %s", e.toString()));
        }
        return current;
    }
}
