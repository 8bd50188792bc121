package dev.gantry.placement.window;

import static org.assertj.core.api.Assertions.assertThat;

import dev.gantry.contracts.events.EventCodec;
import dev.gantry.contracts.jobs.JobQueued;
import dev.gantry.contracts.nodes.NodeInfo;
import dev.gantry.testing.TestDatabase;
import io.quarkus.hibernate.reactive.panache.Panache;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.vertx.VertxContextSupport;
import io.vertx.mutiny.sqlclient.Pool;
import jakarta.inject.Inject;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * The in-memory state against the real PostgreSQL: rows written behind its back (as another
 * replica's consumer would) show up at the next read, deleted ones go, and rows that did not
 * change are neither fetched nor parsed again. The rows are this test's own: a GPU model no job
 * asks for and a taint nobody tolerates keep the running windows off them.
 */
@QuarkusTest
class StateCacheTest {

    private static final String MODEL = "STATE-CACHE-TEST";

    @Inject
    TestDatabase db;

    @Inject
    Pool pool;

    private static NodeInfo node(String name) {
        return new NodeInfo(name, MODEL, 8, List.of(), List.of(), false, 64_000, 256_000, new NodeInfo.Topology("z9", "s9", "l9"), null,
                Map.of(), List.of(new NodeInfo.Taint("gantry.dev/test", "state-cache", "NoSchedule")), true, NodeInfo.Health.READY, 16_384,
                null, 0, false, Instant.now());
    }

    private static JobQueued job(UUID id, int priority) {
        return new JobQueued(id, "cache-" + id.toString().substring(0, 8), "state-cache-test", "bob", priority,
                Instant.now().truncatedTo(ChronoUnit.MILLIS), null, List.of(new JobQueued.TaskGroup("main", 1, 1, null, 1000, 4000)),
                List.of(MODEL), null, null, false, Map.of(), List.of(), true, false, 60L);
    }

    private void insertNode(String name) {
        db.execute("insert into node (name, info, snapshot_version, removed, updated_at) values (?, ?, 1, false, now())", name,
                EventCodec.toJson(node(name)));
    }

    private void insertPending(JobQueued job) {
        db.execute("insert into pending_job (job_id, name, queue, priority, total_gpus, spec, submitted_at, received_at) "
                + "values (?::uuid, ?, ?, ?, 1, ?, now(), now())", job.jobId().toString(), job.name(), job.queue(), job.priority(),
                EventCodec.toJson(job));
    }

    private WindowLoop.State read(StateCache cache) throws Throwable {
        return VertxContextSupport.subscribeAndAwait(() -> Panache.withSession(cache::read));
    }

    private static NodeInfo nodeNamed(WindowLoop.State state, String name) {
        return state.nodes().stream().filter(n -> n.name().equals(name)).findFirst().orElse(null);
    }

    private static ScenarioBuilder.Waiting waiting(WindowLoop.State state, UUID id) {
        return state.waiting().stream().filter(w -> w.jobId().equals(id)).findFirst().orElse(null);
    }

    @Test
    void changedRowsAreReadAgainDeletedOnesGoAndTheRestIsKept() throws Throwable {
        String suffix = UUID.randomUUID().toString().substring(0, 8);
        String kept = "cache-kept-" + suffix;
        String gone = "cache-gone-" + suffix;
        UUID jobId = UUID.randomUUID();
        insertNode(kept);
        insertNode(gone);
        insertPending(job(jobId, 10));
        StateCache cache = new StateCache(pool, Duration.ofHours(1));

        WindowLoop.State first = read(cache);
        NodeInfo keptFirst = nodeNamed(first, kept);
        assertThat(keptFirst).isNotNull();
        assertThat(nodeNamed(first, gone)).isNotNull();
        assertThat(waiting(first, jobId).spec().priority()).isEqualTo(10);

        // behind the cache's back: one node removed, the job's stored spec rewritten
        db.execute("update node set removed = true where name = ?", gone);
        db.execute("update node set snapshot_version = 2 where name = ?", kept); // described again, as it was
        db.execute("update pending_job set spec = ?, priority = 20 where job_id = ?::uuid", EventCodec.toJson(job(jobId, 20)),
                jobId.toString());
        long fetchedBefore = cache.rowsFetched();
        WindowLoop.State second = read(cache);

        assertThat(nodeNamed(second, gone)).as("a removed node is gone").isNull();
        assertThat(waiting(second, jobId).spec().priority()).as("a rewritten row is read again").isEqualTo(20);
        assertThat(nodeNamed(second, kept)).as("a node described again as it was is not parsed again").isSameAs(keptFirst);
        // the rewritten job, plus whatever the running windows wrote meanwhile: far fewer than every row
        long total = db.queryLong("select count(*) from node where not removed") + db.queryLong("select count(*) from pending_job");
        assertThat(cache.rowsFetched() - fetchedBefore).isGreaterThanOrEqualTo(1).isLessThan(total);

        // a cache filled from scratch sees the same
        WindowLoop.State fresh = read(new StateCache(pool, Duration.ofHours(1)));
        assertThat(nodeNamed(fresh, kept)).isEqualTo(keptFirst);
        assertThat(nodeNamed(fresh, gone)).isNull();
        assertThat(waiting(fresh, jobId)).isEqualTo(waiting(second, jobId));

        db.execute("delete from pending_job where job_id = ?::uuid", jobId.toString());
        assertThat(waiting(read(cache), jobId)).as("a deleted job is gone").isNull();
        db.execute("delete from node where name in (?, ?)", kept, gone);
    }

    @Test
    void theReasonAJobWasGivenIsKnownWithoutReadingItsRow() throws Throwable {
        UUID jobId = UUID.randomUUID();
        insertPending(job(jobId, 5));
        db.execute("update pending_job set reason = 'needs 8 GPUs of model X' where job_id = ?::uuid", jobId.toString());
        StateCache cache = new StateCache(pool, Duration.ofHours(1));
        read(cache);
        assertThat(cache.reasonOf(jobId)).isEqualTo("needs 8 GPUs of model X");
        assertThat(cache.reasonOf(UUID.randomUUID())).isNull();
        db.execute("delete from pending_job where job_id = ?::uuid", jobId.toString());
        read(cache);
        assertThat(cache.reasonOf(jobId)).isNull();
    }

    @Test
    void aFullReadIsForcedOnceItsIntervalHasPassed() throws Throwable {
        String name = "cache-full-" + UUID.randomUUID().toString().substring(0, 8);
        insertNode(name);
        StateCache cache = new StateCache(pool, Duration.ZERO);
        NodeInfo first = nodeNamed(read(cache), name);
        NodeInfo second = nodeNamed(read(cache), name);
        assertThat(second).isEqualTo(first).isNotSameAs(first);
        db.execute("delete from node where name = ?", name);
    }
}
