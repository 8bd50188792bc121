package dev.gantry.quota;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.hamcrest.Matchers.equalTo;

import dev.gantry.contracts.events.EventCodec;
import dev.gantry.contracts.events.EventEnvelope;
import dev.gantry.contracts.events.Subjects;
import dev.gantry.contracts.placements.PlacementBound;
import dev.gantry.contracts.placements.PlacementReleased;
import dev.gantry.contracts.quota.QuotaShares;
import dev.gantry.testing.TestDatabase;
import dev.gantry.testing.TestNats;
import dev.gantry.testing.TestTokens;
import io.micrometer.core.instrument.MeterRegistry;
import io.nats.client.Message;
import io.nats.client.Subscription;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import jakarta.inject.Inject;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.Test;

/**
 * The consumers on the real JetStream: placements.* counted once per event id, jobs.* as pending
 * demand; and quota.shares published through the outbox.
 */
@QuarkusTest
class MessagingTest {

    @ConfigProperty(name = "gantry.nats.url")
    String natsUrl;

    @Inject
    TestDatabase db;

    @Inject
    MeterRegistry registry;

    private double consumed(String stream, String outcome) {
        var counter = registry.find("gantry.events.consumed").tag("stream", stream).tag("outcome", outcome).counter();
        return counter == null ? 0 : counter.count();
    }

    @Test
    void placementBoundTwiceIsCountedOnceAndReleaseFreesIt() throws Exception {
        given().auth().oauth2(TestTokens.admin()).contentType(ContentType.JSON).body("{\"capability\": {\"gpus\": 16}}").when().put("/v1/queues/msg-team").then().statusCode(200);
        UUID jobId = UUID.randomUUID();
        EventEnvelope<PlacementBound> bound = EventEnvelope.of(Subjects.PLACEMENTS_BOUND, jobId.toString(),
                new PlacementBound(jobId, "msg-team", "alice", 4, "H100", 32000, 256000, Instant.now()));
        double duplicatesBefore = consumed(Subjects.PLACEMENTS_STREAM, "duplicate");

        try (TestNats nats = TestNats.connect(natsUrl)) {
            Subscription shares = nats.connection().subscribe(Subjects.QUOTA_SHARES);
            nats.connection().flush(Duration.ofSeconds(2));

            nats.publish(bound);
            nats.publish(bound); // the same event id again, as a redelivery after a lost ack would bring it

            await().atMost(Duration.ofSeconds(30)).untilAsserted(() ->
                    assertThat(consumed(Subjects.PLACEMENTS_STREAM, "duplicate")).isGreaterThanOrEqualTo(duplicatesBefore + 1));
            assertThat(db.queryLong("select count(*) from allocation where job_id = ?", jobId)).isEqualTo(1);
            assertThat(db.queryLong("select count(*) from processed_event where event_id = ?", bound.eventId())).isEqualTo(1);
            given().auth().oauth2(TestTokens.admin()).when().get("/v1/queues/msg-team/status").then().statusCode(200).body("allocated.gpus", equalTo(4.0f));

            // quota.shares carries the queue with its allocation (published on change and every period)
            QuotaShares.QueueShare seen = null;
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (seen == null && System.nanoTime() < deadline) {
                Message message = shares.nextMessage(Duration.ofSeconds(1));
                if (message == null) {
                    continue;
                }
                EventEnvelope<QuotaShares> event = EventCodec.decode(new String(message.getData(), StandardCharsets.UTF_8), QuotaShares.class);
                assertThat(message.getHeaders().getFirst("Nats-Msg-Id")).isEqualTo(event.eventId().toString());
                seen = event.payload().queues().stream()
                        .filter(q -> q.name().equals("msg-team") && q.allocatedGpus() == 4).findFirst().orElse(null);
                if (seen != null) {
                    assertThat(event.payload().capacity().gpus()).isEqualTo(16);
                }
            }
            assertThat(seen).as("quota.shares with msg-team holding 4 GPUs").isNotNull();
            assertThat(seen.deservedGpus()).isGreaterThanOrEqualTo(4.0);
            assertThat(seen.capabilityGpus()).isEqualTo(16);

            nats.publish(EventEnvelope.of(Subjects.PLACEMENTS_FAILED, jobId.toString(),
                    new PlacementReleased(jobId, "msg-team", "completed", Instant.now())));
            await().atMost(Duration.ofSeconds(30)).untilAsserted(() ->
                    assertThat(db.queryLong("select count(*) from allocation where job_id = ?", jobId)).isZero());
            // a late duplicate of the bound event cannot bring the allocation back
            nats.publish(EventEnvelope.of(Subjects.PLACEMENTS_BOUND, jobId.toString(),
                    new PlacementBound(jobId, "msg-team", "alice", 4, "H100", 32000, 256000, bound.payload().boundAt())));
            double applied = consumed(Subjects.PLACEMENTS_STREAM, "applied");
            await().atMost(Duration.ofSeconds(30)).untilAsserted(() ->
                    assertThat(consumed(Subjects.PLACEMENTS_STREAM, "applied")).isGreaterThan(applied));
            assertThat(db.queryLong("select count(*) from allocation where job_id = ?", jobId)).isZero();
        }
    }

    @Test
    void jobsQueuedAndCancelledMovePendingDemand() throws Exception {
        UUID jobId = UUID.randomUUID();
        // the payload as admission-service writes it (fields of JobQueued this consumer reads)
        Map<String, Object> queued = Map.of("jobId", jobId.toString(), "name", "train", "queue", "msg-pending", "owner", "alice",
                "priority", 100, "submittedAt", Instant.now().toString(),
                "taskGroups", List.of(Map.of("name", "worker", "replicas", 2, "gpusPerReplica", 4, "cpuMillis", 8000, "memoryMiB", 64000)));
        try (TestNats nats = TestNats.connect(natsUrl)) {
            EventEnvelope<Map<String, Object>> event = EventEnvelope.of(Subjects.JOBS_QUEUED, jobId.toString(), queued);
            nats.publish(event);
            nats.publish(event);
            await().atMost(Duration.ofSeconds(30)).untilAsserted(() ->
                    assertThat(db.queryLong("select gpus from pending_job where job_id = ?", jobId)).isEqualTo(8));
            assertThat(db.queryLong("select cpu_millis from pending_job where job_id = ?", jobId)).isEqualTo(16000);

            nats.publish(EventEnvelope.of(Subjects.JOBS_CANCELLED, jobId.toString(), Map.of("jobId", jobId.toString(), "queue", "msg-pending")));
            await().atMost(Duration.ofSeconds(30)).untilAsserted(() ->
                    assertThat(db.queryLong("select count(*) from pending_job where job_id = ?", jobId)).isZero());
        }
    }

    @Test
    void aJobsQueuedDeliveredAfterTheJobEndedLeavesNoPendingDemand() throws Exception {
        UUID cancelled = UUID.randomUUID();
        UUID completed = UUID.randomUUID();
        try (TestNats nats = TestNats.connect(natsUrl)) {
            // cancelled before its jobs.queued arrived (redelivered after the ack wait)
            nats.publish(EventEnvelope.of(Subjects.JOBS_CANCELLED, cancelled.toString(),
                    Map.of("jobId", cancelled.toString(), "queue", "msg-pending")));
            EventEnvelope<Map<String, Object>> lateQueued = EventEnvelope.of(Subjects.JOBS_QUEUED, cancelled.toString(), queuedPayload(cancelled));
            nats.publish(lateQueued);
            // ran and completed, then its jobs.queued came again
            nats.publish(EventEnvelope.of(Subjects.PLACEMENTS_BOUND, completed.toString(),
                    new PlacementBound(completed, "msg-pending", "alice", 2, null, 0, 0, Instant.now())));
            EventEnvelope<PlacementReleased> end = EventEnvelope.of(Subjects.PLACEMENTS_COMPLETED, completed.toString(),
                    new PlacementReleased(completed, "msg-pending", "completed", Instant.now()));
            nats.publish(end);
            await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(db.queryLong(
                    "select count(*) from processed_event where event_id = ?", end.eventId())).isEqualTo(1));
            EventEnvelope<Map<String, Object>> queuedAgain = EventEnvelope.of(Subjects.JOBS_QUEUED, completed.toString(), queuedPayload(completed));
            nats.publish(queuedAgain);
            await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(db.queryLong(
                    "select count(*) from processed_event where event_id in (?, ?)", lateQueued.eventId(), queuedAgain.eventId())).isEqualTo(2));
        }
        assertThat(db.queryLong("select count(*) from pending_job where job_id in (?, ?)", cancelled, completed)).isZero();
        assertThat(db.queryLong("select count(*) from allocation where job_id = ?", completed)).isZero();
    }

    private static Map<String, Object> queuedPayload(UUID jobId) {
        return Map.of("jobId", jobId.toString(), "name", "train", "queue", "msg-pending", "owner", "alice", "priority", 100,
                "taskGroups", List.of(Map.of("name", "worker", "replicas", 1, "gpusPerReplica", 2, "cpuMillis", 0, "memoryMiB", 0)));
    }

    @Test
    void aBoundJobIsNoLongerPending() throws Exception {
        UUID jobId = UUID.randomUUID();
        Map<String, Object> queued = Map.of("jobId", jobId.toString(), "name", "train", "queue", "msg-pending", "owner", "alice",
                "priority", 100, "taskGroups", List.of(Map.of("name", "worker", "replicas", 1, "gpusPerReplica", 2, "cpuMillis", 0, "memoryMiB", 0)));
        try (TestNats nats = TestNats.connect(natsUrl)) {
            nats.publish(EventEnvelope.of(Subjects.JOBS_QUEUED, jobId.toString(), queued));
            await().atMost(Duration.ofSeconds(30)).untilAsserted(() ->
                    assertThat(db.queryLong("select count(*) from pending_job where job_id = ?", jobId)).isEqualTo(1));
            nats.publish(EventEnvelope.of(Subjects.PLACEMENTS_BOUND, jobId.toString(),
                    new PlacementBound(jobId, "msg-pending", "alice", 2, null, 0, 0, Instant.now())));
            await().atMost(Duration.ofSeconds(30)).untilAsserted(() ->
                    assertThat(db.queryLong("select count(*) from allocation where job_id = ?", jobId)).isEqualTo(1));
            assertThat(db.queryLong("select count(*) from pending_job where job_id = ?", jobId)).isZero();
            nats.publish(EventEnvelope.of(Subjects.PLACEMENTS_PREEMPTED, jobId.toString(),
                    new PlacementReleased(jobId, "msg-pending", "reclaimed by urgent", Instant.now())));
            await().atMost(Duration.ofSeconds(30)).untilAsserted(() ->
                    assertThat(db.queryLong("select count(*) from allocation where job_id = ?", jobId)).isZero());
        }
    }

    @Test
    void nodesEventsKeepTheClusterCapacity() throws Exception {
        String node = "msg-node-" + UUID.randomUUID().toString().substring(0, 8);
        // nodes.upserted as node-inventory writes it: the node under "node", with the snapshot version
        Map<String, Object> upserted = Map.of("snapshotVersion", 1, "node", Map.of("name", node, "gpuModel", "H100", "gpus", 8,
                "cpuMillis", 224000, "memoryMiB", 1900000, "schedulable", true, "health", "READY"));
        try (TestNats nats = TestNats.connect(natsUrl)) {
            nats.publish(EventEnvelope.of(Subjects.NODES_UPSERTED, node, upserted));
            await().atMost(Duration.ofSeconds(30)).untilAsserted(() ->
                    assertThat(db.queryString("select gpus || '/' || ready from node_capacity where name = ?", node)).isEqualTo("8/true"));
            nats.publish(EventEnvelope.of(Subjects.NODES_REMOVED, node, Map.of("snapshotVersion", 2, "name", node)));
            await().atMost(Duration.ofSeconds(30)).untilAsserted(() ->
                    assertThat(db.queryLong("select count(*) from node_capacity where name = ?", node)).isZero());
        }
    }

    @Test
    void malformedPlacementEventIsAcknowledgedAndCounted() throws Exception {
        double before = consumed(Subjects.PLACEMENTS_STREAM, "malformed");
        try (TestNats nats = TestNats.connect(natsUrl)) {
            io.nats.client.impl.Headers headers = new io.nats.client.impl.Headers();
            headers.put("message.type", "[B");
            nats.connection().jetStream().publish(Subjects.PLACEMENTS_BOUND, headers,
                    "{\"type\":\"placements.bound\",\"payload\":{}}".getBytes(StandardCharsets.UTF_8));
        }
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() ->
                assertThat(consumed(Subjects.PLACEMENTS_STREAM, "malformed")).isGreaterThanOrEqualTo(before + 1));
    }
}
