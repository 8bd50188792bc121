package dev.gantry.quota;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.contains;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.hasItem;
import static org.hamcrest.Matchers.hasItems;
import static org.hamcrest.Matchers.nullValue;
import static org.hamcrest.Matchers.startsWith;

import dev.gantry.testing.TestDatabase;
import dev.gantry.testing.TestTokens;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.ValidatableResponse;
import jakarta.inject.Inject;
import org.junit.jupiter.api.Test;

/** POST /v1/import of Volcano Queues and Kubernetes PriorityClasses as multi-document YAML. */
@QuarkusTest
class ImportResourceTest {

    @Inject
    TestDatabase db;

    static final String MANIFESTS = """
            apiVersion: scheduling.volcano.sh/v1beta1
            kind: Queue
            metadata:
              name: imp-research
            spec:
              weight: 3
              reclaimable: false
              parent: root
              capability:
                cpu: "512"
                memory: 4Ti
                nvidia.com/gpu: 64
              guarantee:
                resource:
                  nvidia.com/gpu: 16
                  cpu: 96000m
                  memory: 768Gi
            ---
            apiVersion: scheduling.volcano.sh/v1beta1
            kind: Queue
            metadata:
              name: imp-vision
            spec:
              weight: 1
              parent: imp-research
              capability:
                nvidia.com/gpu: "32"
                cpu: 250.5
                memory: 512Mi
                pods: 100
              guarantee:
                resource:
                  nvidia.com/gpu: 8
            ---
            apiVersion: scheduling.k8s.io/v1
            kind: PriorityClass
            metadata:
              name: imp-high
            value: 100000
            preemptionPolicy: Never
            globalDefault: false
            description: "production training"
            ---
            """;

    private static ValidatableResponse post(String yaml) {
        return given().auth().oauth2(TestTokens.admin()).contentType("application/yaml").body(yaml.getBytes(java.nio.charset.StandardCharsets.UTF_8)).when().post("/v1/import").then();
    }

    @Test
    void volcanoQueuesAndPriorityClassesAreImported() {
        post(MANIFESTS).statusCode(200)
                .body("queues", contains("imp-research", "imp-vision"))
                .body("priorityClasses", contains("imp-high"))
                .body("warnings", hasItems(
                        "documents[1].spec.capability.pods is ignored: Gantry shares only cpu, memory and nvidia.com/gpu",
                        "documents[0]: parent 'root' (Volcano's implicit root) read as a top-level queue"));

        given().auth().oauth2(TestTokens.admin()).when().get("/v1/queues/imp-research").then().statusCode(200)
                .body("parent", nullValue())
                .body("weight", equalTo(3))
                .body("reclaimable", equalTo(false))
                .body("capability.gpus", equalTo(64))
                .body("capability.cpuMillis", equalTo(512000))
                .body("capability.memoryMiB", equalTo(4 * 1024 * 1024))
                .body("guarantee.gpus", equalTo(16))
                .body("guarantee.cpuMillis", equalTo(96000))
                .body("guarantee.memoryMiB", equalTo(768 * 1024));
        given().auth().oauth2(TestTokens.admin()).when().get("/v1/queues/imp-vision").then().statusCode(200)
                .body("parent", equalTo("imp-research"))
                .body("capability.cpuMillis", equalTo(250500))
                .body("capability.memoryMiB", equalTo(512))
                .body("reclaimable", equalTo(true));
        given().auth().oauth2(TestTokens.admin()).when().get("/v1/priority-classes/imp-high").then().statusCode(200)
                .body("value", equalTo(100000))
                .body("preemptionPolicy", equalTo("Never"));

        // importing again replaces the Volcano fields and keeps what Volcano does not carry (state)
        given().auth().oauth2(TestTokens.admin()).contentType("application/json").body("{\"parent\": \"imp-research\", \"state\": \"CLOSED\", \"guarantee\": {\"gpus\": 8},"
                + " \"capability\": {\"gpus\": 32}}").when().put("/v1/queues/imp-vision").then().statusCode(200);
        post(MANIFESTS.replace("weight: 1", "weight: 5")).statusCode(200);
        given().auth().oauth2(TestTokens.admin()).when().get("/v1/queues/imp-vision").then().body("weight", equalTo(5)).body("state", equalTo("CLOSED"));
        // ...unless the manifest states it (Volcano's status.state)
        post(MANIFESTS.replace("weight: 1", "weight: 5\n  state: Open")).statusCode(200);
        given().auth().oauth2(TestTokens.admin()).when().get("/v1/queues/imp-vision").then().body("state", equalTo("OPEN"));
    }

    @Test
    void unknownKindsAreRejectedNamingTheDocumentAndNothingIsStored() {
        long queues = db.queryLong("select count(*) from queue");
        long classes = db.queryLong("select count(*) from priority_class");
        post("""
                apiVersion: scheduling.volcano.sh/v1beta1
                kind: Queue
                metadata: {name: imp-good}
                spec: {weight: 1}
                ---
                apiVersion: apps/v1
                kind: Deployment
                metadata: {name: web}
                """).statusCode(422)
                .contentType(startsWith("application/problem+json"))
                .body("errors.field", contains("documents[1]"))
                .body("detail", equalTo("documents[1]: unsupported kind 'Deployment' (apiVersion 'apps/v1'); supported: "
                        + "Queue (scheduling.volcano.sh/v1beta1), PriorityClass (scheduling.k8s.io/v1)"));
        assertThat(db.queryLong("select count(*) from queue")).isEqualTo(queues);
        assertThat(db.queryLong("select count(*) from priority_class")).isEqualTo(classes);
    }

    @Test
    void oneBadDocumentStoresNothing() {
        long queues = db.queryLong("select count(*) from queue");
        long classes = db.queryLong("select count(*) from priority_class");
        // bad quantity, bad value, a guarantee above the capability, a missing parent: all named at once
        post("""
                apiVersion: scheduling.k8s.io/v1
                kind: PriorityClass
                metadata: {name: imp-ok-class}
                value: 10
                ---
                apiVersion: scheduling.volcano.sh/v1beta1
                kind: Queue
                metadata: {name: imp-bad-mem}
                spec:
                  capability: {memory: 64GB}
                ---
                apiVersion: scheduling.k8s.io/v1
                kind: PriorityClass
                metadata: {name: imp-bad-class}
                value: high
                """).statusCode(422)
                .body("errors.field", contains("documents[1].spec.capability.memory", "documents[2].value"));
        post("""
                apiVersion: scheduling.volcano.sh/v1beta1
                kind: Queue
                metadata: {name: imp-fine}
                spec: {weight: 2}
                ---
                apiVersion: scheduling.volcano.sh/v1beta1
                kind: Queue
                metadata: {name: imp-over}
                spec:
                  capability: {nvidia.com/gpu: 4}
                  guarantee: {resource: {nvidia.com/gpu: 8}}
                ---
                apiVersion: scheduling.volcano.sh/v1beta1
                kind: Queue
                metadata: {name: imp-lost}
                spec: {parent: imp-nowhere}
                """).statusCode(422)
                .body("errors.field", hasItems("documents[1].guarantee.gpus", "documents[2].parent"));
        assertThat(db.queryLong("select count(*) from queue")).isEqualTo(queues);
        assertThat(db.queryLong("select count(*) from priority_class")).isEqualTo(classes);
        given().auth().oauth2(TestTokens.admin()).when().get("/v1/queues/imp-fine").then().statusCode(404);
    }

    @Test
    void unreadableYamlIsABadRequest() {
        post("kind: Queue\n  metadata: [unclosed").statusCode(400)
                .contentType(startsWith("application/problem+json"))
                .body("detail", containsString("not valid YAML"));
        post("").statusCode(422).body("errors.field", hasItem("documents"));
    }
}
