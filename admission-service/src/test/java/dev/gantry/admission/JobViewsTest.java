package dev.gantry.admission;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.hamcrest.Matchers.contains;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.nullValue;

import dev.gantry.contracts.events.EventEnvelope;
import dev.gantry.contracts.events.Subjects;
import dev.gantry.contracts.grpc.v1.GetJobRequest;
import dev.gantry.contracts.grpc.v1.Job;
import dev.gantry.contracts.grpc.v1.JobService;
import dev.gantry.contracts.grpc.v1.TaskPlacement;
import dev.gantry.contracts.placements.PlacementBound;
import dev.gantry.contracts.placements.PlacementReleased;
import dev.gantry.testing.TestDatabase;
import dev.gantry.testing.TestNats;
import io.grpc.Metadata;
import io.quarkus.grpc.GrpcClient;
import io.quarkus.grpc.GrpcClientUtils;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import io.restassured.path.json.JsonPath;
import jakarta.inject.Inject;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.UUID;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.Test;

/**
 * Job views say where and how a job ran: the placement placement reported last (each task's node
 * and GPU indices), how many times the job was placed, and the exit code and reason it ended with;
 * over REST (one job and the list) and gRPC, applied in placement's order like every report.
 */
@QuarkusTest
class JobViewsTest {

    /** Beyond one redelivery (the consumer's 30 s ack wait), as in {@link LifecycleEventsTest}. */
    private static final Duration DELIVERY = Duration.ofSeconds(45);

    @ConfigProperty(name = "gantry.nats.url")
    String natsUrl;

    @Inject
    TestDatabase db;

    @GrpcClient("jobs")
    JobService jobs;

    private final String token = Tokens.of("alice", "vision");

    private String submit() {
        return given().auth().oauth2(token).contentType(ContentType.JSON).body(JobSubmissionTest.VALID_JOB)
                .when().post("/v1/jobs").then().statusCode(201).extract().path("id");
    }

    private JsonPath view(String id) {
        return given().auth().oauth2(token).when().get("/v1/jobs/" + id).then().statusCode(200).extract().jsonPath();
    }

    private String state(String id) {
        return db.queryString("select state from job where id = ?::uuid", id);
    }

    private void awaitProcessed(EventEnvelope<?> event) {
        await().atMost(DELIVERY).until(() ->
                db.queryLong("select count(*) from processed_event where event_id = ?::uuid", event.eventId().toString()) == 1);
    }

    private static PlacementBound.BoundTask task(String task, String node, Integer... gpus) {
        return new PlacementBound.BoundTask(task, node, List.of(gpus), null);
    }

    private static EventEnvelope<PlacementBound> bound(String id, long sequence, PlacementBound.BoundTask... tasks) {
        return EventEnvelope.of(Subjects.PLACEMENTS_BOUND, id, new PlacementBound(UUID.fromString(id), "normal", "alice", 3,
                "A100-SXM4-80GB", 12000, 48000, Instant.parse("2026-12-06T10:00:00Z").plusSeconds(sequence), List.of(tasks)), sequence);
    }

    private static EventEnvelope<PlacementReleased> released(String subject, String id, String reason, Integer exitCode, long sequence) {
        return EventEnvelope.of(subject, id, new PlacementReleased(UUID.fromString(id), "normal", reason, Instant.now(), exitCode), sequence);
    }

    @Test
    void aBoundJobShowsItsNodesGpusAndFirstAttemptInTheViewAndTheList() throws Exception {
        String id = submit();
        JsonPath before = view(id);
        assertThat(before.getInt("attempts")).isZero();
        assertThat(before.getMap("placement")).isNull();

        try (TestNats nats = TestNats.connect(natsUrl)) {
            nats.publish(bound(id, 1, task("worker-0", "dgx-01", 0, 1), task("worker-1", "dgx-02", 2, 3), task("ps-0", "dgx-01", 4)));
            await().atMost(DELIVERY).until(() -> "PLACED".equals(state(id)));
        }
        JsonPath job = view(id);
        assertThat(job.getInt("attempts")).isEqualTo(1);
        assertThat(job.getInt("placement.attempt")).isEqualTo(1);
        assertThat(job.getString("placement.boundAt")).isEqualTo("2026-12-06T10:00:01Z");
        assertThat(job.getList("placement.tasks.task")).containsExactly("worker-0", "worker-1", "ps-0");
        assertThat(job.getList("placement.tasks.node")).containsExactly("dgx-01", "dgx-02", "dgx-01");
        assertThat(job.getList("placement.tasks[0].gpus", Integer.class)).containsExactly(0, 1);
        assertThat(job.getString("placement.nodeList")).isEqualTo("dgx-01[0-1,4],dgx-02[2-3]");
        assertThat(job.getString("exitCode")).isNull();

        given().auth().oauth2(token).queryParam("limit", 500).when().get("/v1/jobs").then().statusCode(200)
                .body("items.find { it.id == '" + id + "' }.attempts", equalTo(1))
                .body("items.find { it.id == '" + id + "' }.placement.nodeList", equalTo("dgx-01[0-1,4],dgx-02[2-3]"));
    }

    @Test
    void aJobRequeuedAndBoundAgainShowsItsSecondAttemptOnItsNewPlacement() throws Exception {
        String id = submit();
        try (TestNats nats = TestNats.connect(natsUrl)) {
            nats.publish(bound(id, 1, task("worker-0", "dgx-01", 0, 1, 2)));
            await().atMost(DELIVERY).until(() -> "PLACED".equals(state(id)));
            nats.publish(released(Subjects.PLACEMENTS_REQUEUED, id, "node dgx-01 lost", null, 2));
            await().atMost(DELIVERY).until(() -> "QUEUED".equals(state(id)));
            JsonPath requeued = view(id);
            assertThat(requeued.getInt("attempts")).isEqualTo(1);
            assertThat(requeued.getString("placement.nodeList")).as("the last placement is kept as history").isEqualTo("dgx-01[0-2]");

            nats.publish(bound(id, 3, task("worker-0", "dgx-07", 5, 6, 7)));
            await().atMost(DELIVERY).until(() -> "PLACED".equals(state(id)));
        }
        JsonPath job = view(id);
        assertThat(job.getInt("attempts")).isEqualTo(2);
        assertThat(job.getInt("placement.attempt")).isEqualTo(2);
        assertThat(job.getString("placement.nodeList")).isEqualTo("dgx-07[5-7]");
        assertThat(job.getList("placement.tasks.node")).containsExactly("dgx-07");
    }

    @Test
    void aFailedJobShowsItsExitCodeAndReasonWhereItRan() throws Exception {
        String id = submit();
        String reason = "task worker-0 on node dgx-01 exited with code 3; last lines of its log:\nTraceback: boom";
        try (TestNats nats = TestNats.connect(natsUrl)) {
            nats.publish(bound(id, 1, task("worker-0", "dgx-01", 0, 1, 2)));
            await().atMost(DELIVERY).until(() -> "PLACED".equals(state(id)));
            nats.publish(released(Subjects.PLACEMENTS_FAILED, id, reason, 3, 2));
            await().atMost(DELIVERY).until(() -> "FAILED".equals(state(id)));
        }
        given().auth().oauth2(token).when().get("/v1/jobs/" + id).then().statusCode(200)
                .body("state", equalTo("FAILED"))
                .body("exitCode", equalTo(3))
                .body("pendingReason", equalTo(reason))
                .body("attempts", equalTo(1))
                .body("placement.nodeList", equalTo("dgx-01[0-2]"));
        given().auth().oauth2(token).when().get("/v1/jobs/" + id + "/history").then().statusCode(200)
                .body("state", contains("QUEUED", "PLACED", "FAILED"))
                .body("[2].reason", containsString("exited with code 3"));
    }

    @Test
    void aStaleBoundAfterCompletionChangesNeitherThePlacementNorTheAttemptsAndGrpcShowsTheSame() throws Exception {
        String id = submit();
        EventEnvelope<PlacementBound> stale = bound(id, 2, task("worker-0", "dgx-09", 0, 1, 2));
        try (TestNats nats = TestNats.connect(natsUrl)) {
            nats.publish(bound(id, 1, task("worker-0", "dgx-01", 0, 1), task("worker-1", "dgx-02", 3)));
            await().atMost(DELIVERY).until(() -> "PLACED".equals(state(id)));
            nats.publish(released(Subjects.PLACEMENTS_COMPLETED, id, "completed", 0, 5));
            await().atMost(DELIVERY).until(() -> "SUCCEEDED".equals(state(id)));
            nats.publish(stale);
            awaitProcessed(stale);
        }
        given().auth().oauth2(token).when().get("/v1/jobs/" + id).then().statusCode(200)
                .body("state", equalTo("SUCCEEDED"))
                .body("attempts", equalTo(1))
                .body("exitCode", equalTo(0))
                .body("pendingReason", nullValue())
                .body("placement.nodeList", equalTo("dgx-01[0-1],dgx-02[3]"));

        Metadata headers = new Metadata();
        headers.put(Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER), "Bearer " + token);
        Job job = GrpcClientUtils.attachHeaders(jobs, headers).get(GetJobRequest.newBuilder().setId(id).build())
                .await().atMost(Duration.ofSeconds(20));
        assertThat(job.getState()).isEqualTo("SUCCEEDED");
        assertThat(job.getAttempts()).isEqualTo(1);
        assertThat(job.hasExitCode()).isTrue();
        assertThat(job.getExitCode()).isZero();
        assertThat(job.hasPlacement()).isTrue();
        assertThat(job.getPlacement().getAttempt()).isEqualTo(1);
        assertThat(job.getPlacement().getBoundAt()).isEqualTo("2026-12-06T10:00:01Z");
        assertThat(job.getPlacement().getNodeList()).isEqualTo("dgx-01[0-1],dgx-02[3]");
        assertThat(job.getPlacement().getTasksList()).extracting(TaskPlacement::getNode).containsExactly("dgx-01", "dgx-02");
        assertThat(job.getPlacement().getTasks(0).getGpusList()).containsExactly(0, 1);
        assertThat(job.getPlacement().getTasks(0).hasGpuMilli()).isFalse();
    }

    @Test
    void aJobNeverPlacedHasNoPlacementOverGrpc() {
        String id = submit();
        Metadata headers = new Metadata();
        headers.put(Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER), "Bearer " + token);
        Job job = GrpcClientUtils.attachHeaders(jobs, headers).get(GetJobRequest.newBuilder().setId(id).build())
                .await().atMost(Duration.ofSeconds(20));
        assertThat(job.getAttempts()).isZero();
        assertThat(job.hasPlacement()).isFalse();
        assertThat(job.hasExitCode()).isFalse();
    }
}
