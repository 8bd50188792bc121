package dev.gantry.placement.window;

import dev.gantry.contracts.events.EventCodec;
import dev.gantry.contracts.jobs.JobQueued;
import dev.gantry.contracts.nodes.NodeInfo;
import dev.gantry.contracts.quota.QuotaShares;
import dev.gantry.placement.persistence.Allocation;
import dev.gantry.placement.persistence.NodeRecord;
import dev.gantry.placement.persistence.PendingJob;
import dev.gantry.placement.persistence.QuotaSharesRecord;
import dev.gantry.placement.persistence.RunningJobRecord;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.RowSet;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.BiFunction;
import java.util.function.Function;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.jboss.logging.Logger;

/**
 * What windows and fast paths plan against, kept in memory between them: nodes, running jobs,
 * allocations, pending jobs (with the reason they were last given) and the quota shares, parsed.
 *
 * <p>The database stays the source of truth: the jobs, nodes and quota consumers of every replica,
 * the binder, the executor and the pod watcher all write it. So a read does not trust events it may
 * never have seen; it asks PostgreSQL for each row's key and version only (the row's {@code xmin},
 * which every insert or update changes), then fetches and parses just the rows that are new or
 * changed and forgets the ones that are gone. With thousands of jobs waiting, a window reads a few
 * rows instead of all of them. Everything is read again from scratch every {@code full-read-every},
 * as a guard against anything a version cannot show.
 *
 * <p>Not thread-safe: the window loop calls it from one window or fast path at a time.
 */
@ApplicationScoped
public class StateCache {

    private static final Logger LOG = Logger.getLogger(StateCache.class);
    /** Keys per {@code in (...)} fetch: well under PostgreSQL's limit of bind parameters. */
    static final int FETCH_CHUNK = 1000;

    /** A pending job as last read: the job, the reason it was last given, and its spec as stored (to know it unchanged). */
    record Pending(ScenarioBuilder.Waiting waiting, String reason, String storedSpec) {
    }

    /** A node as last read and its description as stored. */
    record Described(NodeInfo node, String stored) {
    }

    /** A running job as last read and its spec as stored. */
    record Running(ScenarioBuilder.Placed placed, String storedSpec) {
    }

    private final Pool pool;
    /** GPUs others hold (DRA claims Gantry did not allocate); unset when a test builds the cache by hand. */
    @jakarta.inject.Inject
    dev.gantry.placement.cluster.HeldElsewhere elsewhere;
    private final Duration fullReadEvery;
    private final Rows<String, Described> nodes = new Rows<>();
    private final Rows<UUID, Running> running = new Rows<>();
    private final Rows<Long, ScenarioBuilder.Held> allocations = new Rows<>();
    private final Rows<UUID, Pending> pending = new Rows<>();
    private final Rows<Integer, List<QuotaShares.QueueShare>> shares = new Rows<>();
    private final Table<String, NodeRecord, Described> nodeTable = new Table<>(nodes,
            "select name, xmin::text from node where removed = false order by name", r -> r.getString(0),
            keys -> NodeRecord.<NodeRecord>list("name in ?1", keys), n -> n.name, StateCache::nodeInfo);
    private final Table<UUID, RunningJobRecord, Running> runningTable = new Table<>(running,
            "select job_id, xmin::text from running_job order by job_id", r -> r.getUUID(0),
            keys -> RunningJobRecord.<RunningJobRecord>list("jobId in ?1", keys), r -> r.jobId, StateCache::placed);
    private final Table<Long, Allocation, ScenarioBuilder.Held> allocationTable = new Table<>(allocations,
            "select id, xmin::text from allocation order by job_id, task", r -> r.getLong(0),
            keys -> Allocation.<Allocation>list("id in ?1", keys), a -> a.id, StateCache::held);
    private final Table<UUID, PendingJob, Pending> pendingTable = new Table<>(pending,
            "select job_id, xmin::text from pending_job order by priority desc, submitted_at, job_id", r -> r.getUUID(0),
            keys -> PendingJob.<PendingJob>list("jobId in ?1", keys), p -> p.jobId, StateCache::pending);
    private final Table<Integer, QuotaSharesRecord, List<QuotaShares.QueueShare>> sharesTable = new Table<>(shares,
            "select id, xmin::text from quota_shares", r -> r.getInteger(0),
            keys -> QuotaSharesRecord.<QuotaSharesRecord>list("id in ?1", keys), q -> q.id, StateCache::shares);
    private long lastFullRead;
    private long rowsFetched;

    public StateCache(Pool pool, @ConfigProperty(name = "gantry.placement.state.full-read-every", defaultValue = "5m") Duration fullReadEvery) {
        this.pool = pool;
        this.fullReadEvery = fullReadEvery;
    }

    /**
     * The state as the database holds it now; must run inside a Panache session (changed rows are
     * fetched as entities). The five listings run at once, on connections of their own; the fetches
     * of changed rows follow one after another on the session's.
     */
    Uni<WindowLoop.State> read() {
        if (System.nanoTime() - lastFullRead > fullReadEvery.toNanos()) {
            forget();
            lastFullRead = System.nanoTime();
        }
        return Uni.combine().all().unis(nodeTable.list(), runningTable.list(), allocationTable.list(), pendingTable.list(),
                sharesTable.list()).asTuple().chain(listed -> nodeTable.update(listed.getItem1())
                .chain(described -> runningTable.update(listed.getItem2())
                        .chain(runningList -> allocationTable.update(listed.getItem3())
                                .chain(heldList -> pendingTable.update(listed.getItem4())
                                        .chain(pendingList -> sharesTable.update(listed.getItem5())
                                                .map(sharesList -> new WindowLoop.State(described.stream().map(Described::node).toList(),
                                                        runningList.stream().map(Running::placed).toList(),
                                                        withElsewhere(heldList, described.stream().map(Described::node).toList()),
                                                        pendingList.stream().map(Pending::waiting).toList(),
                                                        sharesList.isEmpty() ? List.of() : sharesList.get(0))))))));
    }

    private List<ScenarioBuilder.Held> withElsewhere(List<ScenarioBuilder.Held> held, List<NodeInfo> nodes) {
        List<ScenarioBuilder.Held> others = elsewhere == null ? List.of() : elsewhere.held(nodes);
        if (others.isEmpty()) {
            return held;
        }
        List<ScenarioBuilder.Held> all = new ArrayList<>(held);
        all.addAll(others);
        return all;
    }

    /** The reason the job was last given, as of the last read (null: none yet, or not pending then). */
    String reasonOf(UUID jobId) {
        Pending p = pending.value(jobId);
        return p == null ? null : p.reason();
    }

    /** Rows fetched and parsed since start: what the versions saved shows against a full read per window. */
    long rowsFetched() {
        return rowsFetched;
    }

    /** Drops everything held, so the next read fetches every row. */
    void forget() {
        nodes.clear();
        running.clear();
        allocations.clear();
        pending.clear();
        shares.clear();
    }

    /**
     * One table as the cache knows it: {@code versionsSql} lists (key, version) in the order the
     * window wants; {@code fetch} loads rows by key; {@code convert} turns a row into its value,
     * given the value it had before if any, to keep what did not change (null: unreadable, left out,
     * and not read again until it changes).
     */
    private final class Table<K, E, V> {
        private final Rows<K, V> rows;
        private final String versionsSql;
        private final Function<Row, K> key;
        private final Function<List<K>, Uni<List<E>>> fetch;
        private final Function<E, K> keyOf;
        private final BiFunction<E, V, V> convert;

        Table(Rows<K, V> rows, String versionsSql, Function<Row, K> key, Function<List<K>, Uni<List<E>>> fetch, Function<E, K> keyOf,
                BiFunction<E, V, V> convert) {
            this.rows = rows;
            this.versionsSql = versionsSql;
            this.key = key;
            this.fetch = fetch;
            this.keyOf = keyOf;
            this.convert = convert;
        }

        Uni<RowSet<Row>> list() {
            return pool.query(versionsSql).execute();
        }

        /** Brings the rows up to date with a listing: fetches the new and changed ones; returns the values in the listing's order. */
        Uni<List<V>> update(RowSet<Row> listing) {
            List<K> order = new ArrayList<>();
            Map<K, String> versions = new HashMap<>();
            for (Row r : listing) {
                K k = key.apply(r);
                order.add(k);
                versions.put(k, r.getString(1));
            }
            Map<K, V> previous = new HashMap<>();
            List<K> stale = rows.retainAndFindStale(versions, previous);
            Uni<Void> fetched = Uni.createFrom().voidItem();
            for (int from = 0; from < stale.size(); from += FETCH_CHUNK) {
                List<K> chunk = stale.subList(from, Math.min(stale.size(), from + FETCH_CHUNK));
                fetched = fetched.chain(() -> fetch.apply(chunk).invoke(entities -> {
                    rowsFetched += entities.size();
                    for (E e : entities) {
                        K k = keyOf.apply(e);
                        // a row written again since it was listed is stored under the older version: the next read fetches it again
                        rows.put(k, versions.get(k), convert.apply(e, previous.get(k)));
                    }
                }).replaceWithVoid());
            }
            return fetched.map(ignored -> rows.inOrder(order));
        }
    }

    private static Described nodeInfo(NodeRecord n, Described before) {
        if (before != null && before.stored().equals(n.info)) {
            return before; // written again as it was (a newer snapshot version): nothing to parse
        }
        try {
            return new Described(EventCodec.fromJson(n.info, NodeInfo.class), n.info);
        } catch (RuntimeException e) {
            LOG.warnf("node %s: stored description unreadable, left out: %s", n.name, e.getMessage());
            return null;
        }
    }

    private static Running placed(RunningJobRecord r, Running before) {
        JobQueued spec = null;
        if (before != null && before.storedSpec().equals(r.spec)) {
            spec = before.placed().spec(); // only its eviction or protection changed
        } else {
            try {
                spec = EventCodec.fromJson(r.spec, JobQueued.class);
            } catch (RuntimeException e) {
                LOG.warnf("running job %s: stored spec unreadable: %s", r.jobId, e.getMessage());
            }
        }
        // protectedUntil: a job placed again after a preemption is not preempted again for a while;
        // a moving job holds the GPUs it goes to as well (the budget marks who may move: DisruptionBudget)
        List<ScenarioBuilder.Held> targets = MoveTargets.of(r.migrationTargets).stream()
                .map(t -> new ScenarioBuilder.Held(r.jobId, t.task(), t.node(), t.gpus(), t.gpuMilli(), t.cpuMillis(), t.memoryMiB(),
                        t.migProfile(), t.migDevices()))
                .toList();
        return new Running(new ScenarioBuilder.Placed(r.jobId, r.queue, spec, r.boundAt, r.protectedUntil, r.lastMigratedAt, targets,
                false), r.spec);
    }

    private static ScenarioBuilder.Held held(Allocation a, ScenarioBuilder.Held before) {
        return new ScenarioBuilder.Held(a.jobId, a.task, a.node, Arrays.stream(a.gpuIndices).boxed().toList(), a.gpuMilli, a.cpuMillis,
                a.memoryMiB, a.migProfile, a.migDevices == null ? List.of() : List.of(a.migDevices));
    }

    private static Pending pending(PendingJob p, Pending before) {
        if (before != null && before.storedSpec().equals(p.spec)) {
            return new Pending(before.waiting(), p.reason, p.spec); // most often only its reason changed
        }
        try {
            return new Pending(new ScenarioBuilder.Waiting(p.jobId, EventCodec.fromJson(p.spec, JobQueued.class)), p.reason, p.spec);
        } catch (RuntimeException e) {
            LOG.warnf("pending job %s: stored spec unreadable, left out: %s", p.jobId, e.getMessage());
            return null;
        }
    }

    private static List<QuotaShares.QueueShare> shares(QuotaSharesRecord row, List<QuotaShares.QueueShare> before) {
        try {
            List<QuotaShares.QueueShare> queues = EventCodec.fromJson(row.shares, QuotaShares.class).queues();
            return queues == null ? List.of() : queues;
        } catch (RuntimeException e) {
            LOG.warnf("stored quota shares unreadable, queues unbounded: %s", e.getMessage());
            return List.of();
        }
    }

    /** One table's rows as last read: key -> (version, converted value; null when unreadable). */
    static final class Rows<K, V> {
        private record Versioned<V>(String version, V value) {
        }

        private final Map<K, Versioned<V>> byKey = new HashMap<>();

        /**
         * Forgets the keys not in {@code current} and those whose row is new or has another version;
         * returns the latter, and puts the values they had into {@code previous}.
         */
        List<K> retainAndFindStale(Map<K, String> current, Map<K, V> previous) {
            byKey.keySet().retainAll(current.keySet());
            List<K> stale = new ArrayList<>();
            current.forEach((k, version) -> {
                Versioned<V> held = byKey.get(k);
                if (held == null || !held.version().equals(version)) {
                    stale.add(k);
                }
            });
            // until fetched, a stale row is unknown: one deleted in between must not live on in its old version
            for (K k : stale) {
                Versioned<V> held = byKey.remove(k);
                if (held != null && held.value() != null) {
                    previous.put(k, held.value());
                }
            }
            return stale;
        }

        void put(K key, String version, V value) {
            byKey.put(key, new Versioned<>(version, value));
        }

        V value(K key) {
            Versioned<V> v = byKey.get(key);
            return v == null ? null : v.value();
        }

        /** The readable values of {@code keys}, in that order; a key whose row vanished before its fetch is skipped. */
        List<V> inOrder(List<K> keys) {
            List<V> values = new ArrayList<>(keys.size());
            for (K k : keys) {
                Versioned<V> v = byKey.get(k);
                if (v != null && v.value() != null) {
                    values.add(v.value());
                }
            }
            return values;
        }

        void clear() {
            byKey.clear();
        }
    }
}
