package dev.gantry.e2e;

import static io.restassured.RestAssured.given;
import static org.awaitility.Awaitility.await;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.startsWith;

import io.restassured.http.ContentType;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The four services together, as {@code bin/gantry up} runs them, over the real PostgreSQL and NATS JetStream. */
@ExtendWith(RunningGantry.class)
class GantryFlowIT {

    /** The vision team's queue, capped at 16 GPUs, open to the team only; its jobs may ask for priorities up to 1000. */
    private static void visionQueue() {
        given().baseUri(RunningGantry.url("quota-service")).auth().oauth2(RunningGantry.adminToken()).contentType(ContentType.JSON)
                .body("{\"capability\": {\"gpus\": 16}, \"members\": {\"teams\": [\"vision\"]}, \"limits\": {\"maxPriority\": 1000}}")
                .when().put("/v1/queues/normal")
                .then().statusCode(200);
    }

    @Test
    void submittedJobTravelsFromAdmissionToPlacement() {
        visionQueue();
        String jobId = given().baseUri(RunningGantry.url("admission-service"))
                .auth().oauth2(RunningGantry.token("alice", "vision"))
                .contentType(ContentType.JSON)
                .body("""
                        {"name": "e2e-train", "queue": "normal", "priority": 100, "minAvailable": 2,
                         "taskGroups": [{"name": "worker", "replicas": 2, "gpusPerReplica": 4, "cpuMillis": 8000, "memoryMiB": 64000}]}
                        """)
                .when().post("/v1/jobs")
                .then().statusCode(201)
                .extract().path("id");

        // placement holds it: waiting, or already placed if a window found GPUs for it
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(200)).until(() ->
                given().baseUri(RunningGantry.url("placement-service")).auth().oauth2(RunningGantry.adminToken()).when().get("/v1/pending-jobs")
                        .then().statusCode(200).extract().jsonPath().getList("jobId").contains(jobId)
                || given().baseUri(RunningGantry.url("placement-service")).auth().oauth2(RunningGantry.token("alice", "vision")).when().get("/v1/allocations")
                        .then().statusCode(200).extract().jsonPath().getList("jobId").contains(jobId));
    }

    @Test
    void quotaServiceRefusesWhatTheQueueCannotTake() {
        visionQueue();
        String job = """
                {"name": "too-big", "queue": "normal", "taskGroups": [{"name": "worker", "replicas": 4, "gpusPerReplica": 8}]}
                """;
        given().baseUri(RunningGantry.url("admission-service")).auth().oauth2(RunningGantry.token("alice", "vision"))
                .contentType(ContentType.JSON).body(job)
                .when().post("/v1/jobs")
                .then().statusCode(422)
                .contentType(startsWith("application/problem+json"))
                .body("detail", startsWith("ExceedsQueueCapability"));
        given().baseUri(RunningGantry.url("admission-service")).auth().oauth2(RunningGantry.token("mallory", "speech"))
                .contentType(ContentType.JSON).body(job.replace("\"replicas\": 4", "\"replicas\": 1"))
                .when().post("/v1/jobs")
                .then().statusCode(422)
                .body("detail", startsWith("NotMember"));
    }

    @ParameterizedTest(name = "{0} serves health, metrics and OpenAPI")
    @CsvSource({"admission-service", "quota-service", "node-inventory-service", "placement-service"})
    void everyServiceServesOperationsEndpoints(String service) {
        given().baseUri(RunningGantry.url(service)).when().get("/q/health").then().statusCode(200).body("status", equalTo("UP"));
        given().baseUri(RunningGantry.url(service)).when().get("/q/metrics").then().statusCode(200);
        given().baseUri(RunningGantry.url(service)).accept("application/json").when().get("/q/openapi").then().statusCode(200)
                .body("openapi", startsWith("3."));
    }

    @ParameterizedTest(name = "{0} answers malformed JSON with problem+json")
    @CsvSource({
            "admission-service, POST, /v1/jobs",
            "quota-service, PUT, /v1/queues/broken",
            "node-inventory-service, PUT, /v1/nodes/broken"})
    void everyWritingServiceRejectsMalformedJsonAsProblem(String service, String method, String path) {
        // a user submits jobs; queues and nodes are an admin's to change
        String token = service.equals("admission-service") ? RunningGantry.token("alice", "vision") : RunningGantry.adminToken();
        given().baseUri(RunningGantry.url(service)).auth().oauth2(token)
                .contentType(ContentType.JSON).body("{\"oops\": ")
                .when().request(method, path)
                .then().statusCode(400)
                .contentType(startsWith("application/problem+json"))
                .body("status", equalTo(400));
    }

    @ParameterizedTest(name = "{0} refuses {1} {2} without a token (401) and from a user (403)")
    @CsvSource({
            "quota-service, PUT, /v1/queues/e2e-intruder, '{\"weight\": 1}'",
            "quota-service, POST, /v1/admission-checks, '{\"user\": \"u\", \"queue\": \"normal\", \"resources\": {\"gpus\": 1}}'",
            "node-inventory-service, POST, /v1/cluster:apply, '{\"nodes\": []}'",
            "node-inventory-service, PUT, /v1/nodes/e2e-intruder, '{\"gpuModel\": \"L4\", \"gpus\": 1}'",
            "placement-service, POST, /v1/plans, '{}'"})
    void everyServiceRefusesAnonymousAndUserChangesAsProblems(String service, String method, String path, String body) {
        given().baseUri(RunningGantry.url(service)).contentType(ContentType.JSON).body(body)
                .when().request(method, path)
                .then().statusCode(401)
                .contentType(startsWith("application/problem+json"))
                .header("WWW-Authenticate", startsWith("Bearer"));
        given().baseUri(RunningGantry.url(service)).auth().oauth2(RunningGantry.token("mallory", "admin"))
                .contentType(ContentType.JSON).body(body)
                .when().request(method, path)
                .then().statusCode(403)
                .contentType(startsWith("application/problem+json"));
        given().baseUri(RunningGantry.url("quota-service")).auth().oauth2(RunningGantry.adminToken())
                .when().get("/v1/queues/e2e-intruder").then().statusCode(404);
        given().baseUri(RunningGantry.url("node-inventory-service")).auth().oauth2(RunningGantry.adminToken())
                .when().get("/v1/nodes/e2e-intruder").then().statusCode(404);
    }

    @Test
    void aNodeAgentTokenFromBinGantryUpdatesItsOwnNodeOnly() {
        String node = "{\"gpuModel\": \"L4\", \"gpus\": 4, \"topology\": {\"zone\": \"z1\", \"spine\": \"sp1\", \"leaf\": \"lf9\"}}";
        String agent = RunningGantry.agentToken("e2e-agent-01");
        given().baseUri(RunningGantry.url("node-inventory-service")).auth().oauth2(agent).contentType(ContentType.JSON).body(node)
                .when().put("/v1/nodes/e2e-agent-01").then().statusCode(200).body("gpus", equalTo(4));
        given().baseUri(RunningGantry.url("node-inventory-service")).auth().oauth2(agent)
                .when().post("/v1/nodes/e2e-agent-01/heartbeat").then().statusCode(200);
        given().baseUri(RunningGantry.url("node-inventory-service")).auth().oauth2(agent).contentType(ContentType.JSON).body(node)
                .when().put("/v1/nodes/e2e-agent-02").then().statusCode(403).contentType(startsWith("application/problem+json"));
        given().baseUri(RunningGantry.url("node-inventory-service")).auth().oauth2(RunningGantry.adminToken())
                .when().get("/v1/nodes/e2e-agent-02").then().statusCode(404);
        given().baseUri(RunningGantry.url("node-inventory-service")).auth().oauth2(RunningGantry.adminToken())
                .when().delete("/v1/nodes/e2e-agent-01").then().statusCode(204);
    }
}
