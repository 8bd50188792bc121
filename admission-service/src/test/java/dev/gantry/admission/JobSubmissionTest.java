package dev.gantry.admission;

import dev.gantry.testing.FreshTestConsumers;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.common.ResourceArg;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.hasItem;
import static org.hamcrest.Matchers.startsWith;

import dev.gantry.testing.TestDatabase;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import jakarta.inject.Inject;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** Submission over REST against the real PostgreSQL: what is accepted is stored with its event, what is not changes nothing. */
// every test of this module starts with fresh test consumers (global resource)
@QuarkusTestResource(value = FreshTestConsumers.class, initArgs = @ResourceArg(name = "service", value = "admission"))
@QuarkusTest
class JobSubmissionTest {

    static final String VALID_JOB = """
            {"name": "tf-dist-train", "queue": "normal", "priority": 1000, "minAvailable": 2,
             "gpuModels": ["A100-SXM4-80GB"], "gpuTopology": "nvlink", "network": {"required": "leaf", "preferred": "node"},
             "checkpointable": true, "checkpointGraceSeconds": 45, "estimatedRuntimeSeconds": 7200,
             "taskGroups": [
               {"name": "ps", "replicas": 1, "gpusPerReplica": 1, "cpuMillis": 4000, "memoryMiB": 16000, "image": "tf:2.16"},
               {"name": "worker", "replicas": 1, "gpusPerReplica": 2, "cpuMillis": 8000, "memoryMiB": 32000, "image": "tf:2.16",
                "command": ["python", "train.py"]}]}
            """;

    @Inject
    TestDatabase db;

    private long jobs() {
        return db.queryLong("select count(*) from job");
    }

    private long events() {
        return db.queryLong("select count(*) from outbox_event");
    }

    @Test
    void acceptedJobIsStoredQueuedWithItsOutboxEvent() {
        String id = given().auth().oauth2(Tokens.of("alice", "vision")).contentType(ContentType.JSON).body(VALID_JOB)
                .when().post("/v1/jobs")
                .then().statusCode(201)
                .header("Location", containsString("/v1/jobs/"))
                .body("state", equalTo("QUEUED"))
                .body("totalGpus", equalTo(3))
                .body("team", equalTo("vision"))
                .body("owner", equalTo("alice"))
                .extract().path("id");

        given().auth().oauth2(Tokens.of("alice", "vision")).when().get("/v1/jobs/" + id)
                .then().statusCode(200)
                .body("name", equalTo("tf-dist-train"))
                .body("queue", equalTo("normal"));

        assertThat(db.queryString("select subject from outbox_event where subject_id = ?", id)).isEqualTo("jobs.queued");
        String envelope = db.queryString("select envelope from outbox_event where subject_id = ?", id);
        assertThat(envelope).contains("\"jobId\":\"" + id + "\"").contains("\"gpuTopology\":\"nvlink\"")
                .contains("\"required\":\"leaf\"").contains("\"estimatedRuntimeSeconds\":7200")
                .contains("\"checkpointGraceSeconds\":45"); // a node agent's SIGTERM-to-SIGKILL grace for its tasks
        assertThat(db.queryString("select state from job where id = ?::uuid", id)).isEqualTo("QUEUED");
    }

    @Test
    void malformedJsonIsRejectedAsProblemAndStoresNothing() {
        long jobsBefore = jobs();
        long eventsBefore = events();
        given().auth().oauth2(Tokens.of("alice", "vision")).contentType(ContentType.JSON).body("{\"name\": \"broken\", \"taskGroups\": [")
                .when().post("/v1/jobs")
                .then().statusCode(400)
                .contentType(startsWith("application/problem+json"))
                .body("status", equalTo(400))
                .body("title", equalTo("Bad Request"));
        assertThat(jobs()).isEqualTo(jobsBefore);
        assertThat(events()).isEqualTo(eventsBefore);
    }

    @Test
    void unknownFieldsAreRejected() {
        long jobsBefore = jobs();
        given().auth().oauth2(Tokens.of("alice", "vision")).contentType(ContentType.JSON)
                .body(VALID_JOB.replace("\"minAvailable\": 2", "\"minAvailable\": 2, \"gpuz\": 8"))
                .when().post("/v1/jobs")
                .then().statusCode(400)
                .contentType(startsWith("application/problem+json"))
                .body("detail", containsString("gpuz"));
        assertThat(jobs()).isEqualTo(jobsBefore);
    }

    @Test
    void outOfRangeFieldsAreNamedInTheProblem() {
        long jobsBefore = jobs();
        given().auth().oauth2(Tokens.of("alice", "vision")).contentType(ContentType.JSON)
                .body(VALID_JOB.replace("\"gpusPerReplica\": 2", "\"gpusPerReplica\": 65"))
                .when().post("/v1/jobs")
                .then().statusCode(400)
                .contentType(startsWith("application/problem+json"))
                .body("errors.field", hasItem("taskGroups[1].gpusPerReplica"));
        assertThat(jobs()).isEqualTo(jobsBefore);
    }

    @Test
    void domainRulesAreUnprocessableContent() {
        long jobsBefore = jobs();
        given().auth().oauth2(Tokens.of("alice", "vision")).contentType(ContentType.JSON)
                .body(VALID_JOB.replace("\"minAvailable\": 2", "\"minAvailable\": 3").replace("tf-dist-train", "Not_A_DNS_Name")
                        .replace("\"nvlink\"", "\"pcie\""))
                .when().post("/v1/jobs")
                .then().statusCode(422)
                .contentType(startsWith("application/problem+json"))
                .body("errors.field", hasItem("minAvailable"))
                .body("errors.field", hasItem("name"))
                .body("errors.field", hasItem("gpuTopology"));
        assertThat(jobs()).isEqualTo(jobsBefore);
    }

    @Test
    void aMigRequestTravelsToPlacementAndABadOneIsRefusedByField() {
        String mig = """
                {"name": "notebooks", "queue": "normal",
                 "taskGroups": [{"name": "nb", "replicas": 3, "gpusPerReplica": 1, "migProfile": "1g.10gb", "cpuMillis": 2000, "memoryMiB": 8000}]}
                """;
        String id = given().auth().oauth2(Tokens.of("alice", "vision")).contentType(ContentType.JSON).body(mig)
                .when().post("/v1/jobs").then().statusCode(201).body("totalGpus", equalTo(3)).extract().path("id");
        assertThat(db.queryString("select envelope from outbox_event where subject_id = ?", id))
                .contains("\"gpusPerReplica\":1").contains("\"migProfile\":\"1g.10gb\"");
        assertThat(db.queryString("select envelope from outbox_event where subject_id = ?",
                given().auth().oauth2(Tokens.of("alice", "vision")).contentType(ContentType.JSON).body(VALID_JOB)
                        .when().post("/v1/jobs").then().statusCode(201).extract().<String>path("id")))
                .as("a job without MIG sends the event it sent before").doesNotContain("migProfile");

        long jobsBefore = jobs();
        given().auth().oauth2(Tokens.of("alice", "vision")).contentType(ContentType.JSON).body(mig.replace("1g.10gb", "one slice"))
                .when().post("/v1/jobs").then().statusCode(422).contentType(startsWith("application/problem+json"))
                .body("errors.field", hasItem("taskGroups[0].migProfile"))
                .body("errors.message", hasItem(containsString("such as 1g.10gb")));
        given().auth().oauth2(Tokens.of("alice", "vision")).contentType(ContentType.JSON)
                .body(mig.replace("\"migProfile\"", "\"gpuMilli\": 250, \"migProfile\""))
                .when().post("/v1/jobs").then().statusCode(422)
                .body("errors.field", hasItem("taskGroups[0].migProfile"))
                .body("errors.message", hasItem(containsString("not both")));
        given().auth().oauth2(Tokens.of("alice", "vision")).contentType(ContentType.JSON).body(mig.replace("\"gpusPerReplica\": 1", "\"gpusPerReplica\": 0"))
                .when().post("/v1/jobs").then().statusCode(422).body("errors.field", hasItem("taskGroups[0].gpusPerReplica"));
        given().auth().oauth2(Tokens.of("alice", "vision")).contentType(ContentType.JSON)
                .body(mig.replace("\"queue\": \"normal\",", "\"queue\": \"normal\", \"gpuTopology\": \"nvlink\","))
                .when().post("/v1/jobs").then().statusCode(422).body("errors.field", hasItem("taskGroups[0].migProfile"));
        assertThat(jobs()).isEqualTo(jobsBefore);
    }

    @Test
    void aMigratableJobMustBeCheckpointableAndItsFlagTravelsToPlacement() {
        long jobsBefore = jobs();
        given().auth().oauth2(Tokens.of("alice", "vision")).contentType(ContentType.JSON)
                .body(VALID_JOB.replace("\"checkpointable\": true", "\"checkpointable\": false, \"migratable\": true"))
                .when().post("/v1/jobs")
                .then().statusCode(422)
                .contentType(startsWith("application/problem+json"))
                .body("errors.field", hasItem("migratable"));
        assertThat(jobs()).isEqualTo(jobsBefore);

        String id = given().auth().oauth2(Tokens.of("alice", "vision")).contentType(ContentType.JSON)
                .body(VALID_JOB.replace("\"checkpointable\": true", "\"checkpointable\": true, \"migratable\": true"))
                .when().post("/v1/jobs").then().statusCode(201).extract().path("id");
        assertThat(db.queryString("select envelope from outbox_event where subject_id = ?", id)).contains("\"migratable\":true");
        String plain = given().auth().oauth2(Tokens.of("alice", "vision")).contentType(ContentType.JSON).body(VALID_JOB)
                .when().post("/v1/jobs").then().statusCode(201).extract().path("id");
        assertThat(db.queryString("select envelope from outbox_event where subject_id = ?", plain)).contains("\"migratable\":false");
    }

    @Test
    void aMemberOfSeveralTeamsMustNameOne() {
        given().auth().oauth2(Tokens.of("bob", "vision", "speech")).contentType(ContentType.JSON).body(VALID_JOB)
                .when().post("/v1/jobs")
                .then().statusCode(422)
                .body("errors.field", hasItem("team"));
        given().auth().oauth2(Tokens.of("bob", "vision", "speech")).contentType(ContentType.JSON)
                .body(VALID_JOB.replace("\"queue\": \"normal\"", "\"queue\": \"normal\", \"team\": \"speech\""))
                .when().post("/v1/jobs")
                .then().statusCode(201)
                .body("team", equalTo("speech"));
    }

    @Test
    void jobsByStateAndSubmissionOutcomesAreMetrics() {
        given().auth().oauth2(Tokens.of("alice", "vision")).contentType(ContentType.JSON).body(VALID_JOB)
                .when().post("/v1/jobs").then().statusCode(201);
        org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(20)).untilAsserted(() ->
                given().when().get("/q/metrics").then().statusCode(200)
                        .body(org.hamcrest.Matchers.containsString("gantry_admission_jobs{state=\"QUEUED\"}"))
                        .body(org.hamcrest.Matchers.containsString("gantry_admission_submissions_total{outcome=\"accepted\"}")));
    }

    @Test
    void unknownJobIsNotFoundProblem() {
        given().auth().oauth2(Tokens.of("alice", "vision")).when().get("/v1/jobs/" + UUID.randomUUID())
                .then().statusCode(404)
                .contentType(startsWith("application/problem+json"))
                .body("status", equalTo(404));
    }
}
