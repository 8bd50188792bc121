package dev.gantry.admission;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.gantry.contracts.events.EventEnvelope;
import dev.gantry.contracts.events.Subjects;
import dev.gantry.contracts.placements.PlacementBound;
import dev.gantry.contracts.placements.PlacementMigrated;
import dev.gantry.contracts.placements.PlacementPending;
import dev.gantry.contracts.placements.PlacementReleased;
import dev.gantry.testing.TestDatabase;
import dev.gantry.testing.TestNats;
import io.nats.client.Connection;
import io.nats.client.Nats;
import io.nats.client.Subscription;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import jakarta.inject.Inject;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.UUID;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.Test;

/**
 * The lifecycle driven by placement's reports over the real JetStream, each report applied once;
 * and the outbox's promise: an event committed but never published (the process died in between)
 * goes out when the relay runs again.
 */
@QuarkusTest
class LifecycleEventsTest {

    @ConfigProperty(name = "gantry.nats.url")
    String natsUrl;

    @Inject
    TestDatabase db;

    private String state(String id) {
        return db.queryString("select state from job where id = ?::uuid", id);
    }

    @Test
    void boundThenPreemptedJobIsPlacedThenRequeuedWithItsSubmissionTime() throws Exception {
        String token = Tokens.of("alice", "vision");
        String id = given().auth().oauth2(token).contentType(ContentType.JSON).body(JobSubmissionTest.VALID_JOB)
                .when().post("/v1/jobs").then().statusCode(201).extract().path("id");
        String submittedAt = db.queryString("select submitted_at from job where id = ?::uuid", id);
        UUID jobId = UUID.fromString(id);

        EventEnvelope<PlacementBound> bound = EventEnvelope.of(Subjects.PLACEMENTS_BOUND, id,
                new PlacementBound(jobId, "normal", "alice", 3, "A100-SXM4-80GB", 12000, 48000, Instant.now()));
        try (TestNats nats = TestNats.connect(natsUrl)) {
            nats.publish(bound);
            nats.publish(bound); // redelivered: must change nothing
            await().atMost(Duration.ofSeconds(20)).until(() -> "PLACED".equals(state(id)));

            nats.publish(EventEnvelope.of(Subjects.PLACEMENTS_PREEMPTED, id,
                    new PlacementReleased(jobId, "normal", "reclaimed by queue urgent", Instant.now())));
            await().atMost(Duration.ofSeconds(20)).until(() -> "QUEUED".equals(state(id)));
        }
        assertThat(db.queryString("select submitted_at from job where id = ?::uuid", id)).isEqualTo(submittedAt);
        assertThat(db.queryString("select pending_reason from job where id = ?::uuid", id)).contains("reclaimed by queue urgent");
        assertThat(db.queryLong("select count(*) from processed_event where event_id = ?::uuid", bound.eventId().toString()))
                .isEqualTo(1);
    }

    @Test
    void aWaitingJobShowsWhyAndAPlacedJobIgnoresALateReason() throws Exception {
        String token = Tokens.of("alice", "vision");
        String id = given().auth().oauth2(token).contentType(ContentType.JSON).body(JobSubmissionTest.VALID_JOB)
                .when().post("/v1/jobs").then().statusCode(201).extract().path("id");
        UUID jobId = UUID.fromString(id);
        String reason = "needs 3 A100 GPUs on one node; the best node has 2 free";
        try (TestNats nats = TestNats.connect(natsUrl)) {
            nats.publish(EventEnvelope.of(Subjects.PLACEMENTS_PENDING, id, new PlacementPending(jobId, "normal", reason, Instant.now())));
            await().atMost(Duration.ofSeconds(20)).until(() -> reason.equals(
                    db.queryString("select pending_reason from job where id = ?::uuid", id)));
            given().auth().oauth2(token).when().get("/v1/jobs/" + id).then().statusCode(200)
                    .body("pendingReason", org.hamcrest.Matchers.equalTo(reason));

            nats.publish(EventEnvelope.of(Subjects.PLACEMENTS_BOUND, id,
                    new PlacementBound(jobId, "normal", "alice", 3, "A100-SXM4-80GB", 12000, 48000, Instant.now())));
            await().atMost(Duration.ofSeconds(20)).until(() -> "PLACED".equals(state(id)));
            EventEnvelope<PlacementPending> late = EventEnvelope.of(Subjects.PLACEMENTS_PENDING, id,
                    new PlacementPending(jobId, "normal", "stale reason", Instant.now()));
            nats.publish(late);
            await().atMost(Duration.ofSeconds(20)).until(() ->
                    db.queryLong("select count(*) from processed_event where event_id = ?::uuid", late.eventId().toString()) == 1);
        }
        assertThat(db.queryString("select pending_reason from job where id = ?::uuid", id)).isNull();
        assertThat(state(id)).isEqualTo("PLACED");
    }

    @Test
    void aCompletedJobSucceeds() throws Exception {
        String id = given().auth().oauth2(Tokens.of("alice", "vision")).contentType(ContentType.JSON).body(JobSubmissionTest.VALID_JOB)
                .when().post("/v1/jobs").then().statusCode(201).extract().path("id");
        UUID jobId = UUID.fromString(id);
        try (TestNats nats = TestNats.connect(natsUrl)) {
            nats.publish(EventEnvelope.of(Subjects.PLACEMENTS_BOUND, id,
                    new PlacementBound(jobId, "normal", "alice", 3, "A100-SXM4-80GB", 12000, 48000, Instant.now())));
            await().atMost(Duration.ofSeconds(20)).until(() -> "PLACED".equals(state(id)));
            nats.publish(EventEnvelope.of(Subjects.PLACEMENTS_COMPLETED, id,
                    new PlacementReleased(jobId, "normal", "completed", Instant.now())));
            await().atMost(Duration.ofSeconds(20)).until(() -> "SUCCEEDED".equals(state(id)));
        }
    }

    /**
     * How long a report may take to be applied: beyond one redelivery (the consumer's 30 s ack
     * wait), so a delivery that is retried once on a loaded machine is not taken for a wrong state.
     * Seen once in three full runs: a report not applied within 20 s, with nothing in the log.
     */
    private static final Duration DELIVERY = Duration.ofSeconds(45);

    static String submit() {
        return given().auth().oauth2(Tokens.of("alice", "vision")).contentType(ContentType.JSON).body(JobSubmissionTest.VALID_JOB)
                .when().post("/v1/jobs").then().statusCode(201).extract().path("id");
    }

    static EventEnvelope<PlacementBound> bound(String id, long sequence) {
        return EventEnvelope.of(Subjects.PLACEMENTS_BOUND, id,
                new PlacementBound(UUID.fromString(id), "normal", "alice", 3, "A100-SXM4-80GB", 12000, 48000, Instant.now()), sequence);
    }

    static EventEnvelope<PlacementReleased> released(String subject, String id, String reason, long sequence) {
        return EventEnvelope.of(subject, id, new PlacementReleased(UUID.fromString(id), "normal", reason, Instant.now()), sequence);
    }

    private void awaitProcessed(EventEnvelope<?> event) {
        await().atMost(DELIVERY).until(() ->
                db.queryLong("select count(*) from processed_event where event_id = ?::uuid", event.eventId().toString()) == 1);
    }

    @Test
    void completedDeliveredBeforeBoundEndsTheJobSucceededAndTheLateBoundChangesNothing() throws Exception {
        String id = submit();
        EventEnvelope<PlacementBound> lateBound = bound(id, 10);
        try (TestNats nats = TestNats.connect(natsUrl)) {
            nats.publish(released(Subjects.PLACEMENTS_COMPLETED, id, "completed", 11));
            await().atMost(DELIVERY).until(() -> "SUCCEEDED".equals(state(id)));
            nats.publish(lateBound);
            awaitProcessed(lateBound);
        }
        assertThat(state(id)).isEqualTo("SUCCEEDED");
        assertThat(db.queryLong("select placement_sequence from job where id = ?::uuid", id)).isEqualTo(11);
        given().auth().oauth2(Tokens.of("alice", "vision")).when().get("/v1/jobs/" + id + "/history").then().statusCode(200)
                .body("state", org.hamcrest.Matchers.contains("QUEUED", "SUCCEEDED"))
                .body("source", org.hamcrest.Matchers.contains("submitted", Subjects.PLACEMENTS_COMPLETED));
    }

    @Test
    void anOlderReportDeliveredLateDoesNotUndoANewerOne() throws Exception {
        String id = submit();
        EventEnvelope<PlacementBound> redelivered = bound(id, 5);
        try (TestNats nats = TestNats.connect(natsUrl)) {
            nats.publish(bound(id, 5));
            await().atMost(DELIVERY).until(() -> "PLACED".equals(state(id)));
            nats.publish(released(Subjects.PLACEMENTS_PREEMPTED, id, "reclaimed by queue urgent", 7));
            await().atMost(DELIVERY).until(() -> "QUEUED".equals(state(id)));
            nats.publish(redelivered); // the same news again under another event id (a second placement replica, a replay)
            awaitProcessed(redelivered);
        }
        assertThat(state(id)).isEqualTo("QUEUED");
        assertThat(db.queryString("select pending_reason from job where id = ?::uuid", id)).contains("reclaimed by queue urgent");
    }

    @Test
    void aRequeuedJobIsQueuedWithItsReasonStaysCancellableAndItsHistoryTellsWhatHappened() throws Exception {
        String id = submit();
        String token = Tokens.of("alice", "vision");
        EventEnvelope<PlacementBound> boundAfterCancel = bound(id, 3);
        try (TestNats nats = TestNats.connect(natsUrl)) {
            nats.publish(bound(id, 1));
            await().atMost(DELIVERY).until(() -> "PLACED".equals(state(id)));
            nats.publish(released(Subjects.PLACEMENTS_REQUEUED, id, "node h100-a lost", 2));
            await().atMost(DELIVERY).until(() -> "QUEUED".equals(state(id)));
            given().auth().oauth2(token).when().get("/v1/jobs/" + id).then().statusCode(200)
                    .body("state", org.hamcrest.Matchers.equalTo("QUEUED"))
                    .body("pendingReason", org.hamcrest.Matchers.containsString("requeued: node h100-a lost"));
            given().auth().oauth2(token).when().delete("/v1/jobs/" + id).then().statusCode(200)
                    .body("state", org.hamcrest.Matchers.equalTo("CANCELLED"));
            // placement bound it again before it saw the cancellation: the job stays cancelled
            nats.publish(boundAfterCancel);
            awaitProcessed(boundAfterCancel);
        }
        assertThat(state(id)).isEqualTo("CANCELLED");
        given().auth().oauth2(token).when().get("/v1/jobs/" + id + "/history").then().statusCode(200)
                .body("state", org.hamcrest.Matchers.contains("QUEUED", "PLACED", "QUEUED", "CANCELLED"))
                .body("[2].reason", org.hamcrest.Matchers.containsString("node h100-a lost"))
                .body("[3].reason", org.hamcrest.Matchers.equalTo("cancelled by alice"));
        given().auth().oauth2(Tokens.of("mallory", "other-team")).when().get("/v1/jobs/" + id + "/history").then().statusCode(404);
    }

    @Test
    void aMigratedJobStaysPlacedAndItsHistoryShowsEachStepOfTheMove() throws Exception {
        String id = submit();
        UUID jobId = UUID.fromString(id);
        List<PlacementBound.BoundTask> there = List.of(new PlacementBound.BoundTask("worker-0", "h100-b", List.of(0, 1), null));
        EventEnvelope<PlacementMigrated> moved = EventEnvelope.of(Subjects.PLACEMENTS_MIGRATED, id, new PlacementMigrated(jobId, "normal",
                PlacementMigrated.MOVED, "h100-a", "h100-b", null, Instant.now(), null, there), 3);
        try (TestNats nats = TestNats.connect(natsUrl)) {
            nats.publish(bound(id, 1));
            await().atMost(DELIVERY).until(() -> "PLACED".equals(state(id)));
            nats.publish(EventEnvelope.of(Subjects.PLACEMENTS_MIGRATED, id, new PlacementMigrated(jobId, "normal", PlacementMigrated.STOPPING,
                    "h100-a", "h100-b", "defragmenting; checkpoint grace 30s", Instant.now(), Instant.now().plusSeconds(30), List.of()), 2));
            nats.publish(moved);
            nats.publish(moved); // redelivered: one new attempt, not two
            awaitProcessed(moved);
        }
        assertThat(state(id)).isEqualTo("PLACED");
        assertThat(db.queryLong("select attempts from job where id = ?::uuid", id)).isEqualTo(2);
        assertThat(db.queryString("select placement from job where id = ?::uuid", id)).contains("h100-b");
        given().auth().oauth2(Tokens.of("alice", "vision")).when().get("/v1/jobs/" + id + "/history").then().statusCode(200)
                .body("state", org.hamcrest.Matchers.contains("QUEUED", "PLACED", "PLACED", "PLACED"))
                .body("[2].reason", org.hamcrest.Matchers.containsString("migrating from h100-a to h100-b"))
                .body("[3].reason", org.hamcrest.Matchers.equalTo("migrated from h100-a to h100-b"))
                .body("[3].source", org.hamcrest.Matchers.equalTo(Subjects.PLACEMENTS_MIGRATED));
    }

    @Test
    void anEventCommittedButNeverPublishedGoesOutOnTheNextRelay() throws Exception {
        UUID eventId = UUID.randomUUID();
        String envelope = "{\"eventId\":\"" + eventId + "\",\"type\":\"jobs.cancelled\",\"occurredAt\":\"" + Instant.now()
                + "\",\"subjectId\":\"crash-test\",\"version\":1,\"payload\":{\"jobId\":\"" + UUID.randomUUID()
                + "\",\"queue\":\"normal\",\"cancelledBy\":\"alice\",\"cancelledAt\":\"" + Instant.now() + "\"}}";
        try (Connection nats = Nats.connect(natsUrl)) {
            Subscription subscription = nats.subscribe("jobs.cancelled");
            nats.flush(Duration.ofSeconds(2));
            // what a crash right after the commit leaves behind: the row, and nothing on the broker
            db.execute("insert into outbox_event (event_id, subject, subject_id, envelope, created_at, attempts) "
                    + "values (?::uuid, 'jobs.cancelled', 'crash-test', ?, now(), 0)", eventId.toString(), envelope);

            boolean seen = false;
            long deadline = System.nanoTime() + Duration.ofSeconds(15).toNanos();
            while (!seen && System.nanoTime() < deadline) {
                io.nats.client.Message message = subscription.nextMessage(Duration.ofSeconds(1));
                seen = message != null && new String(message.getData(), StandardCharsets.UTF_8).contains(eventId.toString());
            }
            assertThat(seen).as("the orphaned outbox row reached NATS").isTrue();
        }
        await().atMost(Duration.ofSeconds(10)).until(() ->
                db.queryLong("select count(*) from outbox_event where event_id = ?::uuid and published_at is not null",
                        eventId.toString()) == 1);
    }
}
