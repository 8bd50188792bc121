package dev.gantry.admission;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.hasItem;
import static org.hamcrest.Matchers.startsWith;

import dev.gantry.testing.TestDatabase;
import jakarta.inject.Inject;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** Submission over REST against the real PostgreSQL: what is accepted is stored with its event, what is not changes nothing. */
@QuarkusTest
class JobSubmissionTest {

    static final String VALID_JOB = """
            {"name": "tf-dist-train", "queue": "normal", "priority": 1000, "minAvailable": 2,
             "taskGroups": [
               {"name": "ps", "replicas": 1, "gpusPerReplica": 1, "cpuMillis": 4000, "memoryMiB": 16000},
               {"name": "worker", "replicas": 1, "gpusPerReplica": 2, "cpuMillis": 8000, "memoryMiB": 32000}]}
            """;

    @Inject
    TestDatabase db;

    private long count(String entity) {
        return db.queryLong("job".equals(entity) ? "select count(*) from job" : "select count(*) from outbox_event");
    }

    @Test
    void acceptedJobIsStoredQueuedWithItsOutboxEvent() {
        String id = given().contentType(ContentType.JSON).body(VALID_JOB)
                .when().post("/v1/jobs")
                .then().statusCode(201)
                .header("Location", containsString("/v1/jobs/"))
                .body("state", equalTo("QUEUED"))
                .body("totalGpus", equalTo(3))
                .extract().path("id");

        given().when().get("/v1/jobs/" + id)
                .then().statusCode(200)
                .body("name", equalTo("tf-dist-train"))
                .body("queue", equalTo("normal"));

        assertThat(db.queryString("select subject from outbox_event where subject_id = ?", id)).isEqualTo("jobs.queued");
        assertThat(db.queryString("select envelope from outbox_event where subject_id = ?", id)).contains("\"jobId\":\"" + id + "\"");
        assertThat(db.queryString("select state from job where id = ?::uuid", id)).isEqualTo("QUEUED");
    }

    @Test
    void malformedJsonIsRejectedAsProblemAndStoresNothing() {
        long jobsBefore = count("job");
        long eventsBefore = count("outbox");

        given().contentType(ContentType.JSON).body("{\"name\": \"broken\", \"taskGroups\": [")
                .when().post("/v1/jobs")
                .then().statusCode(400)
                .contentType(startsWith("application/problem+json"))
                .body("status", equalTo(400))
                .body("title", equalTo("Bad Request"));

        assertThat(count("job")).isEqualTo(jobsBefore);
        assertThat(count("outbox")).isEqualTo(eventsBefore);
    }

    @Test
    void outOfRangeFieldsAreNamedInTheProblem() {
        long jobsBefore = count("job");
        given().contentType(ContentType.JSON)
                .body(VALID_JOB.replace("\"gpusPerReplica\": 2", "\"gpusPerReplica\": 65"))
                .when().post("/v1/jobs")
                .then().statusCode(400)
                .contentType(startsWith("application/problem+json"))
                .body("errors.field", hasItem("taskGroups[1].gpusPerReplica"));
        assertThat(count("job")).isEqualTo(jobsBefore);
    }

    @Test
    void domainRulesAreUnprocessableContent() {
        long jobsBefore = count("job");
        given().contentType(ContentType.JSON)
                .body(VALID_JOB.replace("\"minAvailable\": 2", "\"minAvailable\": 3").replace("tf-dist-train", "Not_A_DNS_Name"))
                .when().post("/v1/jobs")
                .then().statusCode(422)
                .contentType(startsWith("application/problem+json"))
                .body("errors.field", hasItem("minAvailable"))
                .body("errors.field", hasItem("name"));
        assertThat(count("job")).isEqualTo(jobsBefore);
    }

    @Test
    void unknownJobIsNotFoundProblem() {
        given().when().get("/v1/jobs/" + UUID.randomUUID())
                .then().statusCode(404)
                .contentType(startsWith("application/problem+json"))
                .body("status", equalTo(404));
    }
}
