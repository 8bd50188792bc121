package dev.gantry.admission;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.notNullValue;
import static org.hamcrest.Matchers.startsWith;

import dev.gantry.testing.TestDatabase;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import io.restassured.http.ContentType;
import jakarta.inject.Inject;
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
