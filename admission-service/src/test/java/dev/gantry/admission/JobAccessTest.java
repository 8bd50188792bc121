package dev.gantry.admission;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.everyItem;
import static org.hamcrest.Matchers.hasItem;
import static org.hamcrest.Matchers.not;
import static org.hamcrest.Matchers.nullValue;
import static org.hamcrest.Matchers.startsWith;

import dev.gantry.testing.TestDatabase;
import dev.gantry.testing.TestTokens;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import jakarta.inject.Inject;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Who may do what: the authorization matrix, cancellation, idempotent retries and paging. */
@QuarkusTest
class JobAccessTest {

    @Inject
    TestDatabase db;

    private static String submit(String token, String name, String key) {
        var request = given().auth().oauth2(token).contentType(ContentType.JSON)
                .body(JobSubmissionTest.VALID_JOB.replace("tf-dist-train", name));
        if (key != null) {
            request = request.header("Idempotency-Key", key);
        }
        return request.when().post("/v1/jobs").then().statusCode(201).extract().path("id");
    }

    @Test
    void unauthenticatedRequestsGet401() {
        given().when().get("/v1/jobs").then().statusCode(401);
        given().contentType(ContentType.JSON).body(JobSubmissionTest.VALID_JOB).when().post("/v1/jobs").then().statusCode(401);
        given().auth().oauth2("not-a-token").when().get("/v1/jobs").then().statusCode(401)
                .contentType(startsWith("application/problem+json"));
        given().when().get("/v1/jobs").then().contentType(startsWith("application/problem+json"));
    }

    @Test
    void usersSeeTheirTeamsJobsAdminsSeeAllOthersGet404() {
        String visionJob = submit(Tokens.of("alice", "vision"), "vision-job", null);

        given().auth().oauth2(Tokens.of("carol", "vision")).when().get("/v1/jobs/" + visionJob).then().statusCode(200);
        given().auth().oauth2(Tokens.admin()).when().get("/v1/jobs/" + visionJob).then().statusCode(200);
        given().auth().oauth2(Tokens.of("mallory", "speech")).when().get("/v1/jobs/" + visionJob).then().statusCode(404)
                .contentType(startsWith("application/problem+json"));
        given().auth().oauth2(Tokens.of("mallory", "speech")).when().delete("/v1/jobs/" + visionJob).then().statusCode(404);
        given().auth().oauth2(Tokens.of("mallory", "speech")).when().get("/v1/jobs").then().statusCode(200)
                .body("items.team", everyItem(equalTo("speech")));
        given().auth().oauth2(Tokens.admin()).when().get("/v1/jobs?limit=500").then().statusCode(200)
                .body("items.id", hasItem(visionJob));
    }

    @Test
    void aGroupNamedAdminIsATeamNotTheAdminRole() {
        String visionJob = submit(Tokens.of("alice", "vision"), "vision-private", null);
        String eve = Tokens.of("eve", "admin");
        given().auth().oauth2(eve).when().get("/v1/jobs/" + visionJob).then().statusCode(404);
        given().auth().oauth2(eve).when().delete("/v1/jobs/" + visionJob).then().statusCode(404);
        given().auth().oauth2(eve).when().get("/v1/jobs?limit=500").then().statusCode(200)
                .body("items.id", not(hasItem(visionJob)));
        given().auth().oauth2(Tokens.admin()).when().get("/v1/jobs/" + visionJob).then().statusCode(200).body("state", equalTo("QUEUED"));
        // the group admin is an ordinary team: eve submits into it, as any member of a team would
        given().auth().oauth2(eve).contentType(ContentType.JSON).body(JobSubmissionTest.VALID_JOB.replace("tf-dist-train", "eve-job"))
                .when().post("/v1/jobs").then().statusCode(201).body("team", equalTo("admin"));
    }

    @Test
    void agentAndServiceTokensAreNotUsersOfAdmission() {
        long before = db.queryLong("select count(*) from job");
        for (String token : new String[] {TestTokens.agent("dgx-01"), TestTokens.service(),
                TestTokens.base("mallory").claim("gantry_role", "root").sign()}) {
            given().auth().oauth2(token).when().get("/v1/jobs").then().statusCode(403)
                    .contentType(startsWith("application/problem+json"));
            given().auth().oauth2(token).contentType(ContentType.JSON).body(JobSubmissionTest.VALID_JOB)
                    .when().post("/v1/jobs").then().statusCode(403).contentType(startsWith("application/problem+json"));
        }
        assertThat(db.queryLong("select count(*) from job")).isEqualTo(before);
    }

    @Test
    void tokensWithoutTheAudienceOrOverTheMaximumLifetimeAreRefused() {
        String noAudience = io.smallrye.jwt.build.Jwt.issuer("gantry").subject("alice").groups("vision").expiresIn(600).sign();
        String tooLong = TestTokens.base("alice").groups("vision").expiresIn(13 * 3600).sign();
        for (String token : new String[] {noAudience, tooLong}) {
            given().auth().oauth2(token).when().get("/v1/jobs").then().statusCode(401)
                    .contentType(startsWith("application/problem+json"));
        }
        given().auth().oauth2(TestTokens.base("alice").groups("vision").expiresIn(12 * 3600 - 60).sign())
                .when().get("/v1/jobs").then().statusCode(200);
    }

    @Test
    void submittingForAnotherTeamIsForbidden() {
        long before = db.queryLong("select count(*) from job");
        given().auth().oauth2(Tokens.of("mallory", "speech")).contentType(ContentType.JSON)
                .body(JobSubmissionTest.VALID_JOB.replace("\"queue\": \"normal\"", "\"queue\": \"normal\", \"team\": \"vision\""))
                .when().post("/v1/jobs").then().statusCode(403)
                .contentType(startsWith("application/problem+json"));
        assertThat(db.queryLong("select count(*) from job")).isEqualTo(before);
    }

    @Test
    void cancellingAQueuedJobAnnouncesItOnceAndOnlyOnce() {
        String token = Tokens.of("alice", "vision");
        String id = submit(token, "to-cancel", null);
        given().auth().oauth2(token).when().delete("/v1/jobs/" + id).then().statusCode(200).body("state", equalTo("CANCELLED"));
        given().auth().oauth2(token).when().delete("/v1/jobs/" + id).then().statusCode(409)
                .contentType(startsWith("application/problem+json"));
        assertThat(db.queryLong("select count(*) from outbox_event where subject = 'jobs.cancelled' and subject_id = ?", id))
                .isEqualTo(1);
    }

    @Test
    void aRetriedSubmissionReturnsTheFirstJob() {
        String token = Tokens.of("alice", "vision");
        String key = "retry-" + System.nanoTime();
        String first = submit(token, "retried", key);
        given().auth().oauth2(token).header("Idempotency-Key", key).contentType(ContentType.JSON)
                .body(JobSubmissionTest.VALID_JOB.replace("tf-dist-train", "retried"))
                .when().post("/v1/jobs").then().statusCode(200).body("id", equalTo(first));
        given().auth().oauth2(token).header("Idempotency-Key", key).contentType(ContentType.JSON)
                .body(JobSubmissionTest.VALID_JOB.replace("tf-dist-train", "something-else"))
                .when().post("/v1/jobs").then().statusCode(409)
                .contentType(startsWith("application/problem+json"));
        assertThat(db.queryLong("select count(*) from job where name = 'retried'")).isEqualTo(1);
        assertThat(db.queryLong("select count(*) from job where name = 'something-else'")).isZero();
    }

    @Test
    void listingPagesWithACursorAndFilters() {
        String token = Tokens.of("dave", "paging-team");
        for (int i = 0; i < 5; i++) {
            submit(token, "page-job-" + i, null);
        }
        var first = given().auth().oauth2(token).when().get("/v1/jobs?limit=2&queue=normal").then().statusCode(200)
                .extract().jsonPath();
        List<String> firstNames = first.getList("items.name");
        assertThat(firstNames).containsExactly("page-job-4", "page-job-3");
        String cursor = first.getString("nextCursor");
        List<String> second = given().auth().oauth2(token).when().get("/v1/jobs?limit=2&queue=normal&cursor=" + cursor)
                .then().statusCode(200).extract().jsonPath().getList("items.name");
        assertThat(second).containsExactly("page-job-2", "page-job-1");
        given().auth().oauth2(token).when().get("/v1/jobs?limit=10&state=CANCELLED").then().statusCode(200)
                .body("items.name", not(hasItem("page-job-0")));
        given().auth().oauth2(token).when().get("/v1/jobs?limit=10").then().statusCode(200).body("nextCursor", nullValue());
        given().auth().oauth2(token).when().get("/v1/jobs?cursor=garbage").then().statusCode(400)
                .contentType(startsWith("application/problem+json"));
    }
}
