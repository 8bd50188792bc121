package dev.gantry.admission;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.hasItem;
import static org.hamcrest.Matchers.notNullValue;
import static org.hamcrest.Matchers.startsWith;

import dev.gantry.testing.TestDatabase;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import io.restassured.http.ContentType;
import jakarta.inject.Inject;
import java.io.ByteArrayInputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.UUID;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Limits against abuse, and quota-service being down: clear problems, nothing stored. */
@QuarkusTest
@TestProfile(LimitsTest.TightLimits.class)
class LimitsTest {

    public static class TightLimits implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of(
                    "gantry.admission.submissions-per-minute", "2",
                    "gantry.admission.max-body-bytes", "4000",
                    // small enough that a YAML body under 4000 bytes can expand past it ("\\0" is 2 bytes in, 6 out)
                    "gantry.outbox.max-event-bytes", "6000",
                    "gantry.outbox.max-attempts", "2",
                    // quota-service "down": nothing listens on port 1
                    "gantry.admission.quota-check.enabled", "true",
                    "quarkus.rest-client.quota.url", "http://127.0.0.1:1");
        }
    }

    @Inject
    TestDatabase db;

    @Test
    void oversizedBodiesAre413() {
        String huge = JobSubmissionTest.VALID_JOB.replace("\"queue\": \"normal\"", "\"queue\": \"normal\", \"labels\": {\"padding\": \"" + "x".repeat(5000) + "\"}");
        given().auth().oauth2(Tokens.of("erin", "vision")).contentType(ContentType.JSON).body(huge)
                .when().post("/v1/jobs").then().statusCode(413)
                .contentType(startsWith("application/problem+json"));
    }

    @ConfigProperty(name = "quarkus.http.test-port")
    int port;

    /** Sends the body without a Content-Length (Transfer-Encoding: chunked), as a streaming client does. */
    private HttpResponse<String> postChunked(String contentType, String body, String user) throws Exception {
        HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/v1/jobs"))
                .header("Authorization", "Bearer " + Tokens.of(user, "vision"))
                .header("Content-Type", contentType)
                .POST(HttpRequest.BodyPublishers.ofInputStream(() -> new ByteArrayInputStream(body.getBytes(StandardCharsets.UTF_8))))
                .build();
        return HttpClient.newHttpClient().send(request, HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void chunkedBodiesOverTheLimitAre413AndNothingIsStored() throws Exception {
        long before = db.queryLong("select count(*) from job");
        String json = JobSubmissionTest.VALID_JOB.replace("\"queue\": \"normal\"",
                "\"queue\": \"normal\", \"labels\": {\"padding\": \"" + "x".repeat(5000) + "\"}");
        HttpResponse<String> jsonResponse = postChunked("application/json", json, "gina");
        assertThat(jsonResponse.statusCode()).isEqualTo(413);
        assertThat(jsonResponse.headers().firstValue("Content-Type")).hasValueSatisfying(t -> assertThat(t).startsWith("application/problem+json"));

        String yaml = VolcanoImportTest.TF_DIST_TRAIN.replace("\"--job_name=ps\"", "\"" + "x".repeat(5000) + "\"");
        HttpResponse<String> yamlResponse = postChunked("application/yaml", yaml, "gina");
        assertThat(yamlResponse.statusCode()).isEqualTo(413);
        assertThat(yamlResponse.headers().firstValue("Content-Type")).hasValueSatisfying(t -> assertThat(t).startsWith("application/problem+json"));
        assertThat(db.queryLong("select count(*) from job")).isEqualTo(before);
    }

    @Test
    void aJobWhoseEventWouldBeOverTheBrokersLimitIs413AndNothingIsStored() throws Exception {
        long before = db.queryLong("select count(*) from job");
        long outboxBefore = db.queryLong("select count(*) from outbox_event");
        // 1,300 escapes: 2,600 bytes of YAML, 7,800 bytes once in the event's JSON
        String yaml = VolcanoImportTest.TF_DIST_TRAIN.replace("\"--job_name=ps\"", "\"" + "\\0".repeat(1300) + "\"");
        assertThat(yaml.getBytes(StandardCharsets.UTF_8).length).isLessThan(4000);
        HttpResponse<String> response = postChunked("application/yaml", yaml, "hank");
        assertThat(response.statusCode()).isEqualTo(413);
        assertThat(response.headers().firstValue("Content-Type")).hasValueSatisfying(t -> assertThat(t).startsWith("application/problem+json"));
        assertThat(response.body()).contains("jobs.queued event would be").contains("6000");
        assertThat(db.queryLong("select count(*) from job")).isEqualTo(before);
        assertThat(db.queryLong("select count(*) from outbox_event")).isEqualTo(outboxBefore);
    }

    @Test
    void anEventTheBrokerRefusesIsSetAsideAndTheOthersGoOn() throws Exception {
        // what the size check now refuses, as an older release could have stored it: 1.1 MB, over NATS's 1 MB max_payload
        String stuck = UUID.randomUUID().toString();
        String huge = "{\"eventId\":\"" + stuck + "\",\"type\":\"jobs.cancelled\",\"occurredAt\":\"" + Instant.now()
                + "\",\"subjectId\":\"huge\",\"version\":1,\"payload\":{\"padding\":\"" + "x".repeat(1_100_000) + "\"}}";
        String after = UUID.randomUUID().toString();
        String small = "{\"eventId\":\"" + after + "\",\"type\":\"jobs.cancelled\",\"occurredAt\":\"" + Instant.now()
                + "\",\"subjectId\":\"after-huge\",\"version\":1,\"payload\":{\"jobId\":\"" + UUID.randomUUID() + "\"}}";
        db.execute("insert into outbox_event (event_id, subject, subject_id, envelope, created_at, attempts) "
                + "values (?::uuid, 'jobs.cancelled', 'huge', ?, now(), 0)", stuck, huge);
        db.execute("insert into outbox_event (event_id, subject, subject_id, envelope, created_at, attempts) "
                + "values (?::uuid, 'jobs.cancelled', 'after-huge', ?, now(), 0)", after, small);

        // the later event goes out although the earlier one cannot
        await().atMost(Duration.ofSeconds(15)).until(() -> db.queryLong(
                "select count(*) from outbox_event where event_id = ?::uuid and published_at is not null", after) == 1);
        // after max-attempts (2) the stuck row is set aside, counted and listed for an admin
        await().atMost(Duration.ofSeconds(15)).until(() -> db.queryLong(
                "select count(*) from outbox_event where event_id = ?::uuid and dead_lettered_at is not null", stuck) == 1);
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> given().when().get("/q/metrics").then().statusCode(200)
                .body(containsString("gantry_outbox_dead_letters 1.0")));
        String admin = Tokens.admin();
        // a team called admin is not an admin
        given().auth().oauth2(Tokens.of("root", "admin")).when().get("/v1/admin/outbox/dead-letters").then().statusCode(403);
        long id = db.queryLong("select id from outbox_event where event_id = ?::uuid", stuck);
        given().auth().oauth2(admin).when().get("/v1/admin/outbox/dead-letters").then().statusCode(200)
                .body("id", hasItem((int) id))
                .body("find { it.id == " + id + " }.lastError", notNullValue());
        given().auth().oauth2(Tokens.of("ivan", "vision")).when().get("/v1/admin/outbox/dead-letters").then().statusCode(403);
        given().when().get("/v1/admin/outbox/dead-letters").then().statusCode(401);
        given().auth().oauth2(Tokens.of("ivan", "vision")).when().post("/v1/admin/outbox/dead-letters/" + id + "/retry").then().statusCode(403);
        assertThat(db.queryLong("select count(*) from outbox_event where id = ? and dead_lettered_at is not null", id)).isEqualTo(1);

        // an admin puts it back in line; it still cannot go, so it is set aside again, and nothing else waits for it
        given().auth().oauth2(admin).when().post("/v1/admin/outbox/dead-letters/" + id + "/retry").then().statusCode(200)
                .body("attempts", org.hamcrest.Matchers.equalTo(0));
        await().atMost(Duration.ofSeconds(15)).until(() -> db.queryLong(
                "select attempts from outbox_event where id = ?", id) == 2);
        given().auth().oauth2(admin).when().post("/v1/admin/outbox/dead-letters/999999999/retry").then().statusCode(404)
                .contentType(startsWith("application/problem+json"));
        db.execute("delete from outbox_event where id = ?", id); // leave no dead letter for the other tests
    }

    @Test
    void quotaDownIs503WithRetryAfterThenTooFastIs429() {
        long before = db.queryLong("select count(*) from job");
        String token = Tokens.of("frank", "vision");
        for (int i = 0; i < 2; i++) {
            given().auth().oauth2(token).contentType(ContentType.JSON).body(JobSubmissionTest.VALID_JOB)
                    .when().post("/v1/jobs").then().statusCode(503)
                    .header("Retry-After", notNullValue())
                    .contentType(startsWith("application/problem+json"));
        }
        given().auth().oauth2(token).contentType(ContentType.JSON).body(JobSubmissionTest.VALID_JOB)
                .when().post("/v1/jobs").then().statusCode(429)
                .header("Retry-After", notNullValue())
                .contentType(startsWith("application/problem+json"));
        assertThat(db.queryLong("select count(*) from job")).isEqualTo(before);
    }
}
