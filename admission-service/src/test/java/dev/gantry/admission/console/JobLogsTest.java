package dev.gantry.admission.console;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.startsWith;

import dev.gantry.testing.TestTokens;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * {@code GET /v1/jobs/{id}/logs} (issue 21): the tasks' output, read from placement with admission's
 * service token, for exactly those who may see the job (the job view's rule); everyone else gets
 * 404 and placement is never asked. Placement is {@link ConsoleServicesStub} here; e2e NodeAgentIT
 * reads real output shipped by a real agent.
 */
@QuarkusTest
@QuarkusTestResource(value = ConsoleServicesStub.class, restrictToAnnotatedClass = true)
class JobLogsTest {

    private static final String JOB = """
            {"name": "%s", "queue": "normal", "minAvailable": 1,
             "taskGroups": [{"name": "worker", "replicas": 1, "gpusPerReplica": 1, "cpuMillis": 100, "memoryMiB": 64,
                             "command": ["python3", "train.py"]}]}
            """;

    private static String submit(String name) {
        return given().auth().oauth2(TestTokens.user("alice", "vision")).contentType(ContentType.JSON).body(JOB.formatted(name))
                .when().post("/v1/jobs").then().statusCode(201).extract().path("id");
    }

    @Test
    void whoeverMaySeeTheJobReadsItsTasksOutputThroughPlacementWithTheServiceToken() {
        String id = submit("logs-visible");
        for (String token : new String[] {TestTokens.user("alice", "vision"), TestTokens.user("carol", "vision"), TestTokens.admin()}) {
            ConsoleServicesStub.AUTHORIZATIONS.clear();
            given().auth().oauth2(token).when().get("/v1/jobs/" + id + "/logs").then().statusCode(200)
                    .body("jobId", equalTo(id)).body("tasks[0].task", equalTo("worker-0")).body("tasks[0].text", equalTo("rank=0 world=2\n"))
                    .body("tasks[0].next", equalTo(17));
            assertThat(ConsoleServicesStub.AUTHORIZATIONS).allSatisfy(a -> assertThat(ConsoleServicesStub.isServiceToken(a)).isTrue());
        }
        given().auth().oauth2(TestTokens.user("alice", "vision")).when()
                .get("/v1/jobs/" + id + "/logs?task=worker-0&offset=17&limit=1024&attempt=1765000000000").then().statusCode(200);
        assertThat(ConsoleServicesStub.TASK_LOG_CALLS.getLast()).isEqualTo("/v1/task-logs/" + id
                + "?attempt=1765000000000&task=worker-0&offset=17&limit=1024");
    }

    @Test
    void othersGet404AndPlacementIsNeverAsked() {
        String id = submit("logs-hidden");
        int before = ConsoleServicesStub.TASK_LOG_CALLS.size();
        for (String token : new String[] {TestTokens.user("mallory", "speech"), TestTokens.user("eve", "admin")}) {
            given().auth().oauth2(token).when().get("/v1/jobs/" + id + "/logs").then().statusCode(404)
                    .contentType(startsWith("application/problem+json"));
        }
        given().auth().oauth2(TestTokens.user("alice", "vision")).when().get("/v1/jobs/" + UUID.randomUUID() + "/logs").then()
                .statusCode(404);
        given().when().get("/v1/jobs/" + id + "/logs").then().statusCode(401);
        // agents and services are not users of admission
        given().auth().oauth2(TestTokens.agent("dgx-01")).when().get("/v1/jobs/" + id + "/logs").then().statusCode(403);
        given().auth().oauth2(TestTokens.service()).when().get("/v1/jobs/" + id + "/logs").then().statusCode(403);
        assertThat(ConsoleServicesStub.TASK_LOG_CALLS).hasSize(before);
    }

    @Test
    void badQueriesAre400NamingTheField() {
        String id = submit("logs-bad");
        String alice = TestTokens.user("alice", "vision");
        given().auth().oauth2(alice).when().get("/v1/jobs/" + id + "/logs?limit=0").then().statusCode(400)
                .contentType(startsWith("application/problem+json")).body(containsString("limit"));
        given().auth().oauth2(alice).when().get("/v1/jobs/" + id + "/logs?limit=300000").then().statusCode(400).body(containsString("limit"));
        given().auth().oauth2(alice).when().get("/v1/jobs/" + id + "/logs?task=worker-0&offset=-1").then().statusCode(400)
                .body(containsString("offset"));
        given().auth().oauth2(alice).when().get("/v1/jobs/" + id + "/logs?offset=5").then().statusCode(400).body(containsString("offset"));
        given().auth().oauth2(alice).when().get("/v1/jobs/" + id + "/logs?task=../etc").then().statusCode(400)
                .body(containsString("task"));
    }
}
