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
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
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
 * read fresh for every batch of checks; a check that allows a job reserves its place among the user's
 * pending jobs until its {@code jobs.queued} arrives ({@link #decideAll}).
 */
@ApplicationScoped
public class AdmissionContexts {

    /** The tree and classes as of one version of the configuration. */
    record Config(long version, QueueTree tree, Map<String, PriorityClassSpec> classes) {
    }

    /**
     * Everything a batch of checks decides from, in one statement: the configuration's version, the
     * limits of the batch's users, GPUs running per queue, and each of those users' pending jobs per
     * queue (stored, or reserved by a check whose event has not arrived), not counting the batch's
     * own jobs (a retried check is not counted against itself).
     */
    private static final String CHECK_SQL = """
            select 'v', null, null, version, null::integer, null::integer from quota_config_version where id = 1
            union all
            select 'l', user_name, null, 0, max_gpus_per_job, max_pending_jobs from user_limit where user_name = any($1)
            union all
            select 'r', null, queue, sum(gpus), null, null from allocation group by queue
            union all
            select 'p', owner, queue, count(*), null, null from (
              select owner, queue from pending_job where owner = any($1) and not job_id = any($2)
              union all
              select owner, queue from admission_reservation r where owner = any($1) and not job_id = any($2)
                and not exists (select 1 from pending_job p where p.job_id = r.job_id)) waiting
            group by owner, queue""";

    /** Serializes checks per user, across replicas; taken in one order (by key) so two batches never deadlock. */
    private static final String LOCK_SQL = """
            select pg_advisory_xact_lock(hashtext(k)) from (select distinct 'gantry-quota-user:' || u as k
              from unnest($1::text[]) u order by k) users""";

    private static final String RESERVE_SQL = """
            insert into admission_reservation (job_id, owner, queue, reserved_at)
            select id, owner, queue, now() from unnest($1::uuid[], $2::text[], $3::text[]) as r(id, owner, queue)
            on conflict (job_id) do nothing""";

    private final Pool pool;
    private final QuotaStore store;
    private volatile Config config;
    private final AtomicLong reloads = new AtomicLong();

    public AdmissionContexts(Pool pool, QuotaStore store) {
        this.pool = pool;
        this.store = store;
    }

    /** One check: the job's id, when given, reserves its place among the user's pending jobs. */
    public record Check(AdmissionPolicy.Request request, UUID jobId) {
    }

    public Uni<AdmissionPolicy.Decision> decide(AdmissionPolicy.Request request, UUID jobId) {
        return decideAll(List.of(new Check(request, jobId))).map(List::getFirst);
    }

    /**
     * Decides checks in their order, as if each came alone after the one before: a check that allows
     * a job with an id reserves the job's place among the user's pending jobs, and the later checks
     * of the batch count it. The decisions and the reservations are one transaction, which holds the
     * lock of each user in the batch, so concurrent checks of one user (another batch, another
     * replica) cannot all pass {@code maxPendingJobs}. Checks without an id (an older admission)
     * reserve nothing. A batch costs four statements however many checks it holds: the CPU of a
     * burst went to a transaction per check (issue 18 item 6).
     */
    public Uni<List<AdmissionPolicy.Decision>> decideAll(List<Check> checks) {
        String[] users = checks.stream().map(c -> c.request().user()).distinct().toArray(String[]::new);
        UUID[] jobIds = checks.stream().map(Check::jobId).filter(Objects::nonNull).distinct().toArray(UUID[]::new);
        return pool.withTransaction(connection -> connection.preparedQuery(LOCK_SQL).execute(Tuple.of(users))
                .chain(() -> contexts(connection, users, jobIds))
                .chain(read -> {
                    List<AdmissionPolicy.Decision> decisions = new ArrayList<>();
                    Map<UUID, Check> reserved = new LinkedHashMap<>();
                    for (Check check : checks) {
                        AdmissionPolicy.Decision decision = AdmissionPolicy.check(check.request(), read.of(check.request().user()));
                        decisions.add(decision);
                        if (decision instanceof AdmissionPolicy.Allowed && check.jobId() != null
                                && reserved.putIfAbsent(check.jobId(), check) == null) {
                            read.reserved(check.request().user(), check.request().queue());
                        }
                    }
                    if (reserved.isEmpty()) {
                        return Uni.createFrom().item(decisions);
                    }
                    return connection.preparedQuery(RESERVE_SQL).execute(Tuple.of(
                                    reserved.keySet().toArray(UUID[]::new),
                                    reserved.values().stream().map(c -> c.request().user()).toArray(String[]::new),
                                    reserved.values().stream().map(c -> c.request().queue()).toArray(String[]::new)))
                            .replaceWith(decisions);
                }));
    }

    /** The context of one user, for a check that reserves nothing (read outside any lock). */
    public Uni<AdmissionPolicy.Context> of(String user) {
        return contexts(pool, new String[] {user}, new UUID[0]).map(read -> read.of(user));
    }

    /** What {@link #CHECK_SQL} read, with the pending counts the batch's own reservations add as it is decided. */
    private static final class Read {
        private final Config config;
        private final Map<String, UserLimits> limits;
        private final Map<String, Long> running;
        private final Map<String, Map<String, Long>> pendingByUser;

        Read(Config config, Map<String, UserLimits> limits, Map<String, Long> running, Map<String, Map<String, Long>> pendingByUser) {
            this.config = config;
            this.limits = limits;
            this.running = running;
            this.pendingByUser = pendingByUser;
        }

        AdmissionPolicy.Context of(String user) {
            return new AdmissionPolicy.Context(config.tree(), config.classes(), Optional.ofNullable(limits.get(user)),
                    Map.copyOf(running), Map.copyOf(pendingByUser.getOrDefault(user, Map.of())));
        }

        void reserved(String user, String queue) {
            pendingByUser.computeIfAbsent(user, u -> new HashMap<>()).merge(queue, 1L, Long::sum);
        }
    }

    private Uni<Read> contexts(SqlClient client, String[] users, UUID[] jobIds) {
        return client.preparedQuery(CHECK_SQL).execute(Tuple.of(users, jobIds)).chain(rows -> {
            long version = -1;
            Map<String, UserLimits> limits = new HashMap<>();
            Map<String, Long> running = new HashMap<>();
            Map<String, Map<String, Long>> pending = new HashMap<>();
            for (Row row : rows) {
                switch (row.getString(0)) {
                    case "v" -> version = row.getLong(3);
                    case "l" -> limits.put(row.getString(1), new UserLimits(row.getString(1), row.getInteger(4), row.getInteger(5)));
                    case "r" -> running.put(row.getString(2), row.getLong(3));
                    case "p" -> pending.computeIfAbsent(row.getString(1), u -> new HashMap<>()).put(row.getString(2), row.getLong(3));
                    default -> throw new IllegalStateException("unexpected row kind " + row.getString(0));
                }
            }
            return configAt(version).map(c -> new Read(c, limits, running, pending));
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
