package dev.gantry.admission;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.startsWith;

import dev.gantry.testing.TestDatabase;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import io.restassured.path.json.JsonPath;
import jakarta.inject.Inject;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/**
 * A task group's working directory and environment (issue 21: what a node agent runs each task
 * with), from JSON and from a Volcano Job's container ({@code workingDir}, {@code env}), carried by
 * {@code jobs.queued}; bad ones refused (400 when not the right shape, 422 naming the field).
 */
@QuarkusTest
class TaskEnvironmentTest {

    @Inject
    TestDatabase db;

    private static String job(String name, String extra) {
        return """
                {"name": "%s", "queue": "normal", "minAvailable": 1,
                 "taskGroups": [{"name": "worker", "replicas": 1, "gpusPerReplica": 1, "cpuMillis": 100, "memoryMiB": 64,
                                 "command": ["python3", "train.py"]%s}]}
                """.formatted(name, extra);
    }

    private static io.restassured.response.ValidatableResponse post(String body) {
        return given().auth().oauth2(Tokens.of("alice", "vision")).contentType(ContentType.JSON).body(body).when().post("/v1/jobs").then();
    }

    private JsonPath queuedGroup(String id) {
        String envelope = db.queryString("select envelope from outbox_event where subject = 'jobs.queued' and subject_id = ?", id);
        return JsonPath.from(envelope);
    }

    @Test
    void theWorkingDirectoryAndEnvironmentGoToPlacementWithTheJob() {
        String id = post(job("env-ok", ", \"workingDir\": \"/data/imagenet\", \"env\": {\"EPOCHS\": \"90\", \"DATA_DIR\": \"/data\"}"))
                .statusCode(201).extract().path("id");
        JsonPath queued = queuedGroup(id);
        assertThat(queued.getString("payload.taskGroups[0].workingDir")).isEqualTo("/data/imagenet");
        assertThat(queued.getMap("payload.taskGroups[0].env")).containsEntry("EPOCHS", "90").containsEntry("DATA_DIR", "/data");
    }

    @Test
    void badWorkingDirectoriesAndEnvironmentsAreRefusedNamingTheField() {
        post(job("env-rel", ", \"workingDir\": \"data\"")).statusCode(422).contentType(startsWith("application/problem+json"))
                .body(containsString("taskGroups[0].workingDir"));
        post(job("env-dots", ", \"workingDir\": \"/data/../etc\"")).statusCode(422).body(containsString("taskGroups[0].workingDir"));
        post(job("env-name", ", \"env\": {\"1BAD\": \"x\"}")).statusCode(422).body(containsString("taskGroups[0].env"));
        post(job("env-eq", ", \"env\": {\"A=B\": \"x\"}")).statusCode(422).body(containsString("taskGroups[0].env"));
        // what Gantry sets for each task may not be overridden
        post(job("env-cuda", ", \"env\": {\"CUDA_VISIBLE_DEVICES\": \"0,1,2,3\"}")).statusCode(422)
                .body(containsString("taskGroups[0].env.CUDA_VISIBLE_DEVICES"));
        post(job("env-gantry", ", \"env\": {\"GANTRY_CHECKPOINT_DIR\": \"/tmp\"}")).statusCode(422)
                .body(containsString("taskGroups[0].env.GANTRY_CHECKPOINT_DIR"));
        post(job("env-long", ", \"env\": {\"BIG\": \"" + "x".repeat(5000) + "\"}")).statusCode(422).body(containsString("taskGroups[0].env.BIG"));
        StringBuilder many = new StringBuilder();
        for (int i = 0; i < 65; i++) {
            many.append(i == 0 ? "" : ", ").append("\"V").append(i).append("\": \"1\"");
        }
        post(job("env-many", ", \"env\": {" + many + "}")).statusCode(422).body(containsString("at most 64"));
        // not the right shape: 400
        post(job("env-list", ", \"env\": [\"A=1\"]")).statusCode(400).contentType(startsWith("application/problem+json"));
        post(job("env-obj", ", \"workingDir\": {\"path\": \"/x\"}")).statusCode(400);
    }

    @org.junit.jupiter.params.ParameterizedTest
    @org.junit.jupiter.params.provider.ValueSource(strings = {"checkpointing.json", "ddp-two-nodes.json"})
    void theExamplesAreAccepted(String file) throws Exception {
        String example = java.nio.file.Files.readString(java.nio.file.Path.of("..", "examples", file)).replace("\"default\"", "\"normal\"");
        var response = given().auth().oauth2(Tokens.of("alice", "vision")).contentType(ContentType.JSON).body(example).when().post("/v1/jobs");
        assertThat(response.statusCode()).as(response.asString()).isEqualTo(201);
    }

    @Test
    void aVolcanoContainersWorkingDirAndEnvAreTheTaskGroups() {
        String yaml = """
                apiVersion: batch.volcano.sh/v1alpha1
                kind: Job
                metadata:
                  name: env-volcano
                spec:
                  minAvailable: 1
                  queue: normal
                  tasks:
                    - name: worker
                      replicas: 1
                      template:
                        spec:
                          containers:
                            - name: main
                              image: pytorch/pytorch:2.4.0-cuda12.1-cudnn9-runtime
                              command: ["python3", "train.py"]
                              workingDir: /workspace
                              env:
                                - name: EPOCHS
                                  value: "90"
                              resources:
                                limits:
                                  nvidia.com/gpu: 1
                """;
        String id = given().auth().oauth2(Tokens.of("alice", "vision")).contentType("application/yaml")
                .body(yaml.getBytes(StandardCharsets.UTF_8)).when().post("/v1/jobs").then().statusCode(201).extract().path("id");
        JsonPath queued = queuedGroup(id);
        assertThat(queued.getString("payload.taskGroups[0].workingDir")).isEqualTo("/workspace");
        assertThat(queued.getMap("payload.taskGroups[0].env")).containsEntry("EPOCHS", "90");
        assertThat(queued.getString("payload.taskGroups[0].image")).isEqualTo("pytorch/pytorch:2.4.0-cuda12.1-cudnn9-runtime");

        String fromSecret = yaml.replace("env-volcano", "env-secret").replace("""
                                  value: "90"
                """, """
                                  valueFrom:
                                    secretKeyRef: {name: s, key: k}
                """);
        given().auth().oauth2(Tokens.of("alice", "vision")).contentType("application/yaml").body(fromSecret.getBytes(StandardCharsets.UTF_8))
                .when().post("/v1/jobs").then().statusCode(422).body(containsString("env[0].valueFrom"));
        String reserved = yaml.replace("env-volcano", "env-rank").replace("name: EPOCHS", "name: RANK");
        given().auth().oauth2(Tokens.of("alice", "vision")).contentType("application/yaml").body(reserved.getBytes(StandardCharsets.UTF_8))
                .when().post("/v1/jobs").then().statusCode(422).body(containsString("taskGroups[0].env.RANK"));
    }
}
