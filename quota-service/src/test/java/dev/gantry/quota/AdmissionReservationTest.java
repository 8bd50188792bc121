package dev.gantry.quota;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.gantry.contracts.events.EventEnvelope;
import dev.gantry.contracts.events.Subjects;
import dev.gantry.testing.TestDatabase;
import dev.gantry.testing.TestNats;
import dev.gantry.testing.TestTokens;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import jakarta.inject.Inject;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.Test;

/**
 * An admission check that allows a job reserves its place among the user's pending jobs: before,
 * quota counted a job pending only once its {@code jobs.queued} arrived, so concurrent submissions of
 * one user all passed {@code maxPendingJobs} (seen under the burst of issue 18 item 6: 50 jobs of one
 * user against a limit of 2 would all be let in).
 */
@QuarkusTest
class AdmissionReservationTest {

    @ConfigProperty(name = "gantry.nats.url")
    String natsUrl;

    @Inject
    TestDatabase db;

    private static void put(String path, String body) {
        given().auth().oauth2(TestTokens.admin()).contentType(ContentType.JSON).body(body).when().put(path).then().statusCode(200);
    }

    private static boolean allowed(String user, UUID jobId) {
        String body = "{\"user\": \"" + user + "\", \"team\": \"ml\", \"queue\": \"res-team\", \"jobId\": \"" + jobId
                + "\", \"resources\": {\"gpus\": 1, \"cpuMillis\": 1000, \"memoryMiB\": 4000}}";
        return given().auth().oauth2(TestTokens.service()).contentType(ContentType.JSON).body(body).when().post("/v1/admission-checks")
                .then().statusCode(200).extract().path("allowed");
    }

    private static void limit(String user, int maxPending) {
        put("/v1/queues/res-team", "{\"members\": {\"teams\": [\"ml\"]}, \"capability\": {\"gpus\": 64}}");
        put("/v1/user-limits/" + user, "{\"maxPendingJobs\": " + maxPending + "}");
    }

    @Test
    void concurrentChecksOfOneUserNeverPassTheirPendingLimit() throws Exception {
        String user = "res-burst-" + System.nanoTime();
        limit(user, 3);
        List<Future<Boolean>> answers = new ArrayList<>();
        try (ExecutorService pool = Executors.newFixedThreadPool(10)) {
            for (int i = 0; i < 10; i++) {
                answers.add(pool.submit(() -> allowed(user, UUID.randomUUID())));
            }
        }
        long allowed = 0;
        for (Future<Boolean> answer : answers) {
            allowed += answer.get() ? 1 : 0;
        }
        assertThat(allowed).isEqualTo(3);
        assertThat(db.queryLong("select count(*) from admission_reservation where owner = ?", user)).isEqualTo(3);
    }

    @Test
    void aRetriedCheckIsNotCountedAgainstItselfAndItsJobsEventTakesOverTheReservation() throws Exception {
        String user = "res-retry-" + System.nanoTime();
        limit(user, 1);
        UUID job = UUID.randomUUID();
        assertThat(allowed(user, job)).isTrue();
        assertThat(allowed(user, job)).as("the same job asked again (a retry)").isTrue();
        assertThat(allowed(user, UUID.randomUUID())).as("another job beyond the limit").isFalse();

        EventEnvelope<Map<String, Object>> queued = EventEnvelope.of(Subjects.JOBS_QUEUED, job.toString(), Map.of("jobId", job.toString(),
                "name", "train", "queue", "res-team", "owner", user, "priority", 100, "submittedAt", Instant.now().toString(),
                "taskGroups", List.of(Map.of("name", "worker", "replicas", 1, "gpusPerReplica", 1, "cpuMillis", 1000, "memoryMiB", 4000))));
        try (TestNats nats = TestNats.connect(natsUrl)) {
            nats.publish(queued);
            await().atMost(Duration.ofSeconds(30)).untilAsserted(() ->
                    assertThat(db.queryLong("select count(*) from pending_job where job_id = ?", job)).isEqualTo(1));
        }
        assertThat(db.queryLong("select count(*) from admission_reservation where job_id = ?", job)).isZero();
        assertThat(allowed(user, UUID.randomUUID())).as("the pending job still counts").isFalse();
        // its demand would change other tests' fair shares (the cluster is shared by the whole suite)
        db.execute("delete from pending_job where job_id = ?", job);
    }

    @Test
    void aReservationWhoseJobNeverArrivesExpires() throws Exception {
        String user = "res-lost-" + System.nanoTime();
        limit(user, 1);
        UUID lost = UUID.randomUUID();
        assertThat(allowed(user, lost)).isTrue();
        assertThat(allowed(user, UUID.randomUUID())).isFalse();
        // admission never stored it: once the reservation is older than the ttl (2 s in tests) the sweep drops it
        await().atMost(Duration.ofSeconds(20)).untilAsserted(() ->
                assertThat(db.queryLong("select count(*) from admission_reservation where job_id = ?", lost)).isZero());
        assertThat(allowed(user, UUID.randomUUID())).isTrue();
    }

    @Test
    void aCheckWithoutAJobIdReservesNothing() {
        String user = "res-old-" + System.nanoTime();
        limit(user, 1);
        String body = "{\"user\": \"" + user + "\", \"team\": \"ml\", \"queue\": \"res-team\", "
                + "\"resources\": {\"gpus\": 1, \"cpuMillis\": 1000, \"memoryMiB\": 4000}}";
        for (int i = 0; i < 2; i++) {
            given().auth().oauth2(TestTokens.service()).contentType(ContentType.JSON).body(body).when().post("/v1/admission-checks")
                    .then().statusCode(200).body("allowed", org.hamcrest.Matchers.equalTo(true));
        }
        assertThat(db.queryLong("select count(*) from admission_reservation where owner = ?", user)).isZero();
    }
}
