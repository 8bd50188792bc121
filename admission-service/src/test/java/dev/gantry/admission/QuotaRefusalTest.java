package dev.gantry.admission;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.startsWith;

import com.sun.net.httpserver.HttpServer;
import dev.gantry.testing.TestDatabase;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import io.restassured.http.ContentType;
import jakarta.inject.Inject;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * quota-service answering 4xx is quota refusing one request, not quota being down: one user's bad
 * requests must not open the circuit breaker and shut everyone else out (seen: five such requests
 * made every other user's submissions 503 for 10 s).
 */
@QuarkusTest
@TestProfile(QuotaRefusalTest.RealQuotaCheck.class)
class QuotaRefusalTest {

    private static final int PORT = 18095;
    private static final AtomicInteger checks = new AtomicInteger();
    private static HttpServer quota;

    public static class RealQuotaCheck implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of("gantry.admission.quota-check.enabled", "true",
                    "quarkus.rest-client.quota.url", "http://127.0.0.1:" + PORT,
                    "gantry.admission.submissions-per-minute", "1000");
        }
    }

    /** Stands in for quota-service: a 400 problem for mallory's checks, allowed for everyone else. */
    @BeforeAll
    static void startQuota() {
        try {
            quota = HttpServer.create(new InetSocketAddress("127.0.0.1", PORT), 0);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        quota.createContext("/v1/admission-checks", new QuotaStandIn(body -> {
            checks.incrementAndGet();
            lastCheck = body;
            boolean bad = body.contains("\"mallory\"");
            return bad ? new QuotaStandIn.Answer(400, "{\"status\":400,\"title\":\"Bad Request\",\"detail\":\"resources.cpuMillis: must be 0 or more\"}")
                    : new QuotaStandIn.Answer(200, "{\"allowed\":true,\"reason\":null,\"message\":\"ok\",\"priority\":null}");
        }));
        quota.start();
    }

    @AfterAll
    static void stopQuota() {
        quota.stop(0);
    }

    @Inject
    TestDatabase db;

    private static volatile String lastCheck;

    @Test
    void theCheckCarriesTheIdTheJobIsStoredUnderSoQuotaCanReserveItsPlace() {
        String id = given().auth().oauth2(Tokens.of("alice", "vision")).contentType(ContentType.JSON).body(JobSubmissionTest.VALID_JOB)
                .when().post("/v1/jobs").then().statusCode(201).extract().path("id");
        assertThat(lastCheck).contains("\"jobId\":\"" + id + "\"");
    }

    @Test
    void aRequestQuotaRefusesIsNotRetriedAndDoesNotOpenTheCircuitForOthers() {
        long before = db.queryLong("select count(*) from job");
        int checksBefore = checks.get();
        String mallory = Tokens.of("mallory", "vision");
        for (int i = 0; i < 12; i++) { // past the breaker's volume threshold (10) at a 100 % "failure" ratio
            given().auth().oauth2(mallory).contentType(ContentType.JSON).body(JobSubmissionTest.VALID_JOB)
                    .when().post("/v1/jobs").then().statusCode(400)
                    .contentType(startsWith("application/problem+json"))
                    .body("detail", containsString("must be 0 or more"));
        }
        assertThat(checks.get() - checksBefore).as("a refusal is not retried").isEqualTo(12);
        assertThat(db.queryLong("select count(*) from job")).isEqualTo(before);

        given().auth().oauth2(Tokens.of("alice", "vision")).contentType(ContentType.JSON).body(JobSubmissionTest.VALID_JOB)
                .when().post("/v1/jobs").then().statusCode(201);
    }

    /** Concurrent checks go to quota together; one it finds malformed fails alone, not the batch it went in. */
    @Test
    void aRefusedCheckSentTogetherWithOthersFailsAloneAndTheOthersAreAccepted() throws Exception {
        long before = db.queryLong("select count(*) from job");
        List<java.util.concurrent.Future<Integer>> statuses = new java.util.ArrayList<>();
        try (var submitters = java.util.concurrent.Executors.newVirtualThreadPerTaskExecutor()) {
            for (int i = 0; i < 30; i++) {
                String user = i % 3 == 0 ? "mallory" : "concurrent-" + i;
                statuses.add(submitters.submit(() -> given().auth().oauth2(Tokens.of(user, "vision")).contentType(ContentType.JSON)
                        .body(JobSubmissionTest.VALID_JOB).when().post("/v1/jobs").then().extract().statusCode()));
            }
        }
        for (int i = 0; i < 30; i++) {
            assertThat(statuses.get(i).get()).as("submission %d", i).isEqualTo(i % 3 == 0 ? 400 : 201);
        }
        assertThat(db.queryLong("select count(*) from job")).isEqualTo(before + 20);
    }

    @Test
    void quantitiesThatWouldOverflowAreRefusedWith400NamingTheFieldBeforeQuotaIsAsked() {
        int checksBefore = checks.get();
        String overflowing = JobSubmissionTest.VALID_JOB.replaceFirst("\"cpuMillis\": *\\d+", "\"cpuMillis\": 4611686018427387904");
        assertThat(overflowing).contains("4611686018427387904");
        given().auth().oauth2(Tokens.of("bob", "vision")).contentType(ContentType.JSON).body(overflowing)
                .when().post("/v1/jobs").then().statusCode(400)
                .contentType(startsWith("application/problem+json"))
                .body(containsString("cpuMillis"));
        String yaml = VolcanoImportTest.TF_DIST_TRAIN.replace("cpu: \"4\"", "cpu: \"4611686018427387\"");
        given().auth().oauth2(Tokens.of("bob", "vision")).contentType("application/yaml")
                .body(yaml.getBytes(StandardCharsets.UTF_8))
                .when().post("/v1/jobs").then().statusCode(400)
                .contentType(startsWith("application/problem+json"))
                .body(containsString("taskGroups[0].cpuMillis"));
        String topPriority = JobSubmissionTest.VALID_JOB.replace("\"priority\": 1000", "\"priority\": 2147483647");
        assertThat(topPriority).contains("2147483647");
        given().auth().oauth2(Tokens.of("bob", "vision")).contentType(ContentType.JSON).body(topPriority)
                .when().post("/v1/jobs").then().statusCode(400)
                .contentType(startsWith("application/problem+json"))
                .body(containsString("priority"));
        assertThat(checks.get()).as("quota never saw them").isEqualTo(checksBefore);
    }
}
