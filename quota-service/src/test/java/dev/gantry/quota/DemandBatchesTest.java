package dev.gantry.quota;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.gantry.contracts.events.EventCodec;
import dev.gantry.contracts.events.EventEnvelope;
import dev.gantry.contracts.events.Subjects;
import dev.gantry.contracts.placements.PlacementBound;
import dev.gantry.kit.inbox.EventBatch;
import dev.gantry.quota.messaging.QuotaEventsConsumer;
import dev.gantry.testing.TestDatabase;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.vertx.VertxContextSupport;
import jakarta.inject.Inject;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import org.eclipse.microprofile.reactive.messaging.Message;
import org.junit.jupiter.api.Test;

/**
 * Quota's consumers store a run of {@code jobs.queued} or {@code placements.bound} in one statement
 * (issue 18 item 6) with the effect of applying the events one by one: once per event id, never
 * reviving an ended job, a bound job no longer pending, a bind older than the job's release ignored.
 */
@QuarkusTest
class DemandBatchesTest {

    @Inject
    TestDatabase db;

    @Inject
    QuotaEventsConsumer consumer;

    private final Set<String> acked = ConcurrentHashMap.newKeySet();
    private final Set<String> nacked = ConcurrentHashMap.newKeySet();

    private Message<JsonNode> message(String name, EventEnvelope<?> envelope) throws Exception {
        JsonNode tree = EventCodec.mapper().readTree(EventCodec.encode(envelope));
        return Message.of(tree, () -> {
            acked.add(name);
            return CompletableFuture.completedFuture(null);
        }, reason -> {
            nacked.add(name);
            return CompletableFuture.completedFuture(null);
        });
    }

    private static EventEnvelope<Map<String, Object>> queued(UUID jobId, int replicas) {
        return EventEnvelope.of(Subjects.JOBS_QUEUED, jobId.toString(), Map.of("jobId", jobId.toString(), "name", "train",
                "queue", "batch-q", "owner", "alice", "priority", 100, "submittedAt", Instant.now().toString(),
                "taskGroups", List.of(Map.of("name", "worker", "replicas", replicas, "gpusPerReplica", 1, "cpuMillis", 1000,
                        "memoryMiB", 4000))));
    }

    private static EventEnvelope<PlacementBound> bound(UUID jobId, Instant at) {
        return EventEnvelope.of(Subjects.PLACEMENTS_BOUND, jobId.toString(),
                new PlacementBound(jobId, "batch-q", "alice", 1, null, 1000, 4000, at));
    }

    @org.junit.jupiter.api.AfterEach
    void leaveNoDemand() {
        // other tests read the whole cluster's demand and usage
        db.execute("delete from pending_job where queue = 'batch-q'");
        db.execute("delete from allocation where queue = 'batch-q'");
    }

    private long pending(UUID job) {
        return db.queryLong("select count(*) from pending_job where job_id = ?", job);
    }

    private long allocated(UUID job) {
        return db.queryLong("select count(*) from allocation where job_id = ?", job);
    }

    @Test
    void aRunOfQueuedEventsHasTheEffectOfStoringThemOneByOne() throws Throwable {
        UUID seen = UUID.randomUUID();
        UUID ended = UUID.randomUUID();
        UUID running = UUID.randomUUID();
        UUID twice = UUID.randomUUID();
        UUID cancelledBetween = UUID.randomUUID();
        UUID plain = UUID.randomUUID();
        EventEnvelope<Map<String, Object>> seenBefore = queued(seen, 1);
        db.execute("insert into processed_event (event_id, type, processed_at) values (?, 'jobs.queued', now())", seenBefore.eventId());
        db.execute("insert into ended_job (job_id, ended_at) values (?, now())", ended);
        db.execute("insert into allocation (job_id, queue, owner, gpus, cpu_millis, memory_mib, bound_at) "
                + "values (?, 'batch-q', 'alice', 1, 0, 0, now())", running);
        EventBatch<JsonNode> batch = new EventBatch<>(List.of(
                message("seen", seenBefore),
                message("ended", queued(ended, 1)),
                message("running", queued(running, 1)),
                message("twice-1", queued(twice, 1)),
                message("between", queued(cancelledBetween, 1)),
                message("cancel", EventEnvelope.of(Subjects.JOBS_CANCELLED, cancelledBetween.toString(),
                        Map.of("jobId", cancelledBetween.toString(), "queue", "batch-q"))),
                message("twice-2", queued(twice, 3)),
                message("plain", queued(plain, 2))));

        VertxContextSupport.subscribeAndAwait(() -> consumer.onJobEvents(batch));

        assertThat(nacked).isEmpty();
        assertThat(acked).hasSize(8);
        assertThat(pending(seen)).as("an event seen before changes nothing").isZero();
        assertThat(pending(ended)).as("an ended job is never revived").isZero();
        assertThat(pending(running)).as("a running job is not pending demand").isZero();
        assertThat(pending(cancelledBetween)).isZero();
        assertThat(db.queryLong("select gpus from pending_job where job_id = ?", twice)).as("the last event of a job wins").isEqualTo(3);
        assertThat(db.queryLong("select cpu_millis from pending_job where job_id = ?", plain)).isEqualTo(2000);
    }

    @Test
    void aRunOfBoundEventsHasTheEffectOfStoringThemOneByOne() throws Throwable {
        UUID waiting = UUID.randomUUID();
        UUID releasedLater = UUID.randomUUID();
        UUID twice = UUID.randomUUID();
        Instant now = Instant.now();
        db.execute("insert into pending_job (job_id, queue, owner, gpus, cpu_millis, memory_mib, queued_at) "
                + "values (?, 'batch-q', 'alice', 1, 0, 0, now())", waiting);
        db.execute("insert into released_job (job_id, released_at) values (?, ?)", releasedLater,
                java.sql.Timestamp.from(now.plusSeconds(60)));
        EventEnvelope<PlacementBound> twiceBound = bound(twice, now);
        EventBatch<JsonNode> batch = new EventBatch<>(List.of(
                message("waiting", bound(waiting, now)),
                message("released-later", bound(releasedLater, now)),
                message("twice", twiceBound),
                message("twice-again", twiceBound)));

        VertxContextSupport.subscribeAndAwait(() -> consumer.onPlacementEvents(batch));

        assertThat(nacked).isEmpty();
        assertThat(allocated(waiting)).isEqualTo(1);
        assertThat(pending(waiting)).as("a bound job is no longer pending").isZero();
        assertThat(allocated(releasedLater)).as("a bind older than the job's release holds nothing").isZero();
        assertThat(allocated(twice)).isEqualTo(1);
        assertThat(db.queryLong("select count(*) from processed_event where event_id = ?", twiceBound.eventId())).isEqualTo(1);
    }
}
