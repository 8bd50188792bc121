package dev.gantry.placement;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.startsWith;

import dev.gantry.testing.TestDatabase;
import dev.gantry.testing.TestTokens;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import io.restassured.specification.RequestSpecification;
import jakarta.inject.Inject;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/**
 * Who may call placement (issue 19, item 1): a dry-run plan (up to 30 s of a core) is an admin's;
 * allocations are for users, services and admins; the pending set names every team's jobs, so it is
 * for services and admins. 401 without a token, 403 with the wrong role, problem+json both.
 */
@QuarkusTest
class PlacementAuthorizationTest {

    @Inject
    TestDatabase db;

    private static RequestSpecification as(String token) {
        return token == null ? given() : given().auth().oauth2(token);
    }

    private static String seed() throws IOException {
        try (InputStream in = PlacementAuthorizationTest.class.getResourceAsStream("/scenarios/seed-volcano-example.json")) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    @Test
    void aDryRunPlanIsAnAdminsOnly() throws IOException {
        long allocations = db.queryLong("select count(*) from allocation");
        String[][] refused = {{null, "401"}, {"not-a-token", "401"}, {TestTokens.user("alice", "vision"), "403"},
                {TestTokens.user("eve", "admin"), "403"}, {TestTokens.agent("dgx-01"), "403"}, {TestTokens.service(), "403"}};
        for (String[] caller : refused) {
            int status = Integer.parseInt(caller[1]);
            long started = System.nanoTime();
            as(caller[0]).contentType(ContentType.JSON).body(seed()).when().post("/v1/plans?profile=thorough&timeLimit=30s")
                    .then().statusCode(status).contentType(startsWith("application/problem+json")).body("status", equalTo(status));
            // refused before the solver runs: a thorough profile with a 30 s limit would take seconds
            assertThat(System.nanoTime() - started).isLessThan(3_000_000_000L);
        }
        as(TestTokens.admin()).contentType(ContentType.JSON).body(seed()).when().post("/v1/plans?planner=greedy")
                .then().statusCode(200).body("format", equalTo("gantry-plan/v1"));
        assertThat(db.queryLong("select count(*) from allocation")).isEqualTo(allocations);
    }

    @Test
    void readsNeedAToken() {
        as(null).when().get("/v1/allocations").then().statusCode(401).contentType(startsWith("application/problem+json"))
                .header("WWW-Authenticate", startsWith("Bearer"));
        as(null).when().get("/v1/pending-jobs").then().statusCode(401).contentType(startsWith("application/problem+json"));
        as(TestTokens.user("alice", "vision")).when().get("/v1/allocations").then().statusCode(200);
        as(TestTokens.service()).when().get("/v1/allocations").then().statusCode(200);
        as(TestTokens.user("alice", "vision")).when().get("/v1/pending-jobs").then().statusCode(403)
                .contentType(startsWith("application/problem+json"));
        as(TestTokens.agent("dgx-01")).when().get("/v1/allocations").then().statusCode(403);
        as(TestTokens.service()).when().get("/v1/pending-jobs").then().statusCode(200);
        as(TestTokens.admin()).when().get("/v1/pending-jobs").then().statusCode(200);
        as(null).when().get("/q/health/ready").then().statusCode(200);
    }
}
