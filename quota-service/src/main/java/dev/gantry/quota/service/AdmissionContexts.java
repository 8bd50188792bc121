package dev.gantry.quota.service;

import dev.gantry.quota.domain.AdmissionPolicy;
import dev.gantry.quota.domain.PriorityClassSpec;
import dev.gantry.quota.domain.QueueTree;
import dev.gantry.quota.domain.UserLimits;
import io.quarkus.hibernate.reactive.panache.Panache;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.SqlClient;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import java.util.stream.Collectors;

/**
 * What an admission check decides from, read in one statement: the user's limits, GPUs running
 * per queue, the user's pending jobs per queue, and the version of the queue tree and priority
 * classes. The tree and the classes themselves are kept in memory and read again only when that
 * version (bumped by a trigger on every change of either table, whoever makes it) has moved, so a
 * change made on another replica is seen by the next check here as it was before. The counts are
 * read fresh for every check; a check that allows a job reserves its place among the user's pending
 * jobs until its {@code jobs.queued} arrives ({@link #decide}).
 */
@ApplicationScoped
public class AdmissionContexts {

    /** The tree and classes as of one version of the configuration. */
    record Config(long version, QueueTree tree, Map<String, PriorityClassSpec> classes) {
    }

    private static final String CHECK_SQL = """
            select 'v', null, version, null::integer, null::integer from quota_config_version where id = 1
            union all
            select 'l', null, 0, max_gpus_per_job, max_pending_jobs from user_limit where user_name = $1
            union all
            select 'r', queue, sum(gpus), null, null from allocation group by queue
            union all
            select 'p', queue, count(*), null, null from (
              select queue from pending_job where owner = $1 and job_id is distinct from $2
              union all
              select queue from admission_reservation r where owner = $1 and job_id is distinct from $2
                and not exists (select 1 from pending_job p where p.job_id = r.job_id)) waiting
            group by queue""";

    private static final String RESERVE_SQL = """
            insert into admission_reservation (job_id, owner, queue, reserved_at) values ($1, $2, $3, now())
            on conflict (job_id) do nothing""";

    private final Pool pool;
    private final QuotaStore store;
    private volatile Config config;
    private final AtomicLong reloads = new AtomicLong();

    public AdmissionContexts(Pool pool, QuotaStore store) {
        this.pool = pool;
        this.store = store;
    }

    /**
     * Decides a check. With the job's id, the decision and the place it takes among the user's
     * pending jobs are one transaction, serialized per user (an advisory lock), so concurrent checks
     * of one user cannot all pass {@code maxPendingJobs}; the same job checked again (a retry) is not
     * counted against itself. Without an id (an older admission), nothing is reserved.
     */
    public Uni<AdmissionPolicy.Decision> decide(AdmissionPolicy.Request request, UUID jobId) {
        if (jobId == null) {
            return of(pool, request.user(), null).map(context -> AdmissionPolicy.check(request, context));
        }
        return pool.withTransaction(connection -> connection.preparedQuery("select pg_advisory_xact_lock(hashtext($1))")
                .execute(Tuple.of("gantry-quota-user:" + request.user()))
                .chain(() -> of(connection, request.user(), jobId))
                .chain(context -> {
                    AdmissionPolicy.Decision decision = AdmissionPolicy.check(request, context);
                    if (!(decision instanceof AdmissionPolicy.Allowed)) {
                        return Uni.createFrom().item(decision);
                    }
                    return connection.preparedQuery(RESERVE_SQL).execute(Tuple.of(jobId, request.user(), request.queue()))
                            .replaceWith(decision);
                }));
    }

    public Uni<AdmissionPolicy.Context> of(String user) {
        return of(pool, user, null);
    }

    private Uni<AdmissionPolicy.Context> of(SqlClient client, String user, UUID jobId) {
        return client.preparedQuery(CHECK_SQL).execute(Tuple.of(user, jobId)).chain(rows -> {
            long version = -1;
            Optional<UserLimits> limits = Optional.empty();
            Map<String, Long> running = new HashMap<>();
            Map<String, Long> pending = new HashMap<>();
            for (Row row : rows) {
                switch (row.getString(0)) {
                    case "v" -> version = row.getLong(2);
                    case "l" -> limits = Optional.of(new UserLimits(user, row.getInteger(3), row.getInteger(4)));
                    case "r" -> running.put(row.getString(1), row.getLong(2));
                    case "p" -> pending.put(row.getString(1), row.getLong(2));
                    default -> throw new IllegalStateException("unexpected row kind " + row.getString(0));
                }
            }
            Optional<UserLimits> userLimits = limits;
            return configAt(version).map(c -> new AdmissionPolicy.Context(c.tree(), c.classes(), userLimits, running, pending));
        });
    }

    /** The cached configuration if it is of {@code version}, else read again (and cached). */
    private Uni<Config> configAt(long version) {
        Config cached = config;
        if (cached != null && cached.version() == version) {
            return Uni.createFrom().item(cached);
        }
        // the version is read before the tables: a change between the two makes the copy look older than it is
        // (read again next time), never newer
        return Panache.withSession(() -> store.allQueues().chain(queues -> store.allPriorityClasses()
                        .map(classes -> new Config(version, new QueueTree(queues),
                                classes.stream().collect(Collectors.toMap(PriorityClassSpec::name, Function.identity()))))))
                .invoke(read -> {
                    reloads.incrementAndGet();
                    Config current = config;
                    if (current == null || current.version() <= read.version()) {
                        config = read;
                    }
                });
    }

    /** How often the tree and classes were read (tests: a change is seen, an unchanged tree is not read again). */
    public long reloads() {
        return reloads.get();
    }
}
