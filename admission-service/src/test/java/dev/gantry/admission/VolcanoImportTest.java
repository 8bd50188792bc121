package dev.gantry.admission;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.hasItem;
import static org.hamcrest.Matchers.startsWith;

import dev.gantry.testing.TestDatabase;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import org.junit.jupiter.api.Test;

/** Volcano Job manifests, as users already write them, import as they are. */
@QuarkusTest
class VolcanoImportTest {

    /** The seed's distributed TensorFlow example: one parameter server and one worker, gang of 2. */
    static final String TF_DIST_TRAIN = """
            apiVersion: batch.volcano.sh/v1alpha1
            kind: Job
            metadata:
              name: tf-dist-train
              labels:
                project: imagenet
            spec:
              minAvailable: 2
              schedulerName: volcano
              queue: normal
              priorityClassName: high-priority
              policies:
                - event: PodEvicted
                  action: RestartJob
              tasks:
                - name: ps
                  replicas: 1
                  template:
                    spec:
                      containers:
                        - name: tensorflow
                          image: tensorflow/tensorflow:2.16.1-gpu
                          command: ["python", "/opt/train.py", "--job_name=ps"]
                          resources:
                            limits:
                              nvidia.com/gpu: 1
                              cpu: "4"
                              memory: 16Gi
                      restartPolicy: OnFailure
                - name: worker
                  replicas: 1
                  template:
                    spec:
                      containers:
                        - name: tensorflow
                          image: tensorflow/tensorflow:2.16.1-gpu
                          command: ["python", "/opt/train.py", "--job_name=worker"]
                          resources:
                            limits:
                              nvidia.com/gpu: 2
                              cpu: 8000m
                              memory: 32Gi
                      nodeSelector:
                        nvidia.com/gpu.product: A100-SXM4-80GB
                      restartPolicy: OnFailure
            """;

    @Inject
    TestDatabase db;

    /** REST Assured has no YAML encoder: send the bytes as they are. */
    private static byte[] yaml(String text) {
        return text.getBytes(java.nio.charset.StandardCharsets.UTF_8);
    }

    @Test
    void theSeedTfDistTrainExampleImportsAsIs() {
        String id = given().auth().oauth2(Tokens.of("alice", "vision")).contentType("application/yaml").body(yaml(TF_DIST_TRAIN))
                .when().post("/v1/jobs")
                .then().statusCode(201)
                .body("name", equalTo("tf-dist-train"))
                .body("queue", equalTo("normal"))
                .body("priorityClass", equalTo("high-priority"))
                .body("totalGpus", equalTo(3))
                .extract().path("id");
        String envelope = db.queryString("select envelope from outbox_event where subject_id = ?", id);
        assertThat(envelope).contains("\"minAvailable\":2")
                // image and command ride along for placement's kubernetes binder, which creates the pods
                .contains("{\"name\":\"ps\",\"replicas\":1,\"gpusPerReplica\":1,\"gpuMilli\":null,\"cpuMillis\":4000,\"memoryMiB\":16384,"
                        + "\"image\":\"tensorflow/tensorflow:2.16.1-gpu\",\"command\":[\"python\",\"/opt/train.py\",\"--job_name=ps\"]}")
                .contains("{\"name\":\"worker\",\"replicas\":1,\"gpusPerReplica\":2,\"gpuMilli\":null,\"cpuMillis\":8000,\"memoryMiB\":32768,"
                        + "\"image\":\"tensorflow/tensorflow:2.16.1-gpu\",\"command\":[\"python\",\"/opt/train.py\",\"--job_name=worker\"]}")
                .contains("\"nvidia.com/gpu.product\":\"A100-SXM4-80GB\"");
        assertThat(db.queryString("select spec from job where id = ?::uuid", id))
                .contains("tensorflow/tensorflow:2.16.1-gpu").contains("--job_name=worker");
    }

    @Test
    void networkLocalityComesFromVolcanosNetworkTopologyOrGantrysAnnotations() {
        String onOneNode = TF_DIST_TRAIN.replace("  labels:\n", "  annotations:\n    gantry.dev/network-required: node\n  labels:\n");
        String id = given().auth().oauth2(Tokens.of("alice", "vision")).contentType("application/yaml").body(yaml(onOneNode))
                .when().post("/v1/jobs").then().statusCode(201).extract().path("id");
        assertThat(db.queryString("select envelope from outbox_event where subject_id = ?", id))
                .contains("\"network\":{\"required\":\"node\",\"preferred\":null}");

        String softSpine = TF_DIST_TRAIN.replace("  minAvailable: 2\n",
                "  minAvailable: 2\n  networkTopology:\n    mode: soft\n    highestTierAllowed: 2\n");
        id = given().auth().oauth2(Tokens.of("alice", "vision")).contentType("application/yaml").body(yaml(softSpine))
                .when().post("/v1/jobs").then().statusCode(201).extract().path("id");
        assertThat(db.queryString("select envelope from outbox_event where subject_id = ?", id))
                .contains("\"network\":{\"required\":null,\"preferred\":\"spine\"}");

        given().auth().oauth2(Tokens.of("alice", "vision")).contentType("application/yaml")
                .body(yaml(onOneNode.replace("network-required: node", "network-required: rack")))
                .when().post("/v1/jobs").then().statusCode(422)
                .body("errors.field", hasItem(containsString("network")));
    }

    @Test
    void aVolcanoJobIsMigratableByAnnotationAndOnlyWhenCheckpointable() {
        String migratable = TF_DIST_TRAIN.replace("  labels:\n",
                "  annotations:\n    gantry.dev/migratable: \"true\"\n    gantry.dev/checkpointable: \"true\"\n  labels:\n");
        String id = given().auth().oauth2(Tokens.of("alice", "vision")).contentType("application/yaml").body(yaml(migratable))
                .when().post("/v1/jobs").then().statusCode(201).extract().path("id");
        assertThat(db.queryString("select envelope from outbox_event where subject_id = ?", id))
                .contains("\"checkpointable\":true").contains("\"migratable\":true");

        given().auth().oauth2(Tokens.of("alice", "vision")).contentType("application/yaml")
                .body(yaml(migratable.replace("    gantry.dev/checkpointable: \"true\"\n", "")))
                .when().post("/v1/jobs").then().statusCode(422)
                .body("errors.field", hasItem("migratable"));
    }

    @Test
    void migDevicesAreAskedForByTheDevicePluginsResourceName() {
        String inference = TF_DIST_TRAIN.replace("nvidia.com/gpu: 1\n", "nvidia.com/mig-3g.40gb: 1\n")
                .replace("nvidia.com/gpu: 2\n", "nvidia.com/mig-1g.10gb.me: 2\n");
        String id = given().auth().oauth2(Tokens.of("alice", "vision")).contentType("application/yaml").body(yaml(inference))
                .when().post("/v1/jobs").then().statusCode(201).extract().path("id");
        assertThat(db.queryString("select envelope from outbox_event where subject_id = ?", id))
                .contains("\"name\":\"ps\",\"replicas\":1,\"gpusPerReplica\":1,").contains("\"migProfile\":\"3g.40gb\"")
                .contains("\"name\":\"worker\",\"replicas\":1,\"gpusPerReplica\":2,").contains("\"migProfile\":\"1g.10gb+me\"");

        long before = db.queryLong("select count(*) from job");
        given().auth().oauth2(Tokens.of("alice", "vision")).contentType("application/yaml")
                .body(yaml(TF_DIST_TRAIN.replace("nvidia.com/gpu: 1\n", "nvidia.com/gpu: 1\n" + " ".repeat(18) + "nvidia.com/mig-1g.10gb: 1\n")))
                .when().post("/v1/jobs").then().statusCode(422)
                .body("errors.field", hasItem("spec.tasks[0].template.spec.containers[0].resources.limits.nvidia.com/mig-1g.10gb"));
        given().auth().oauth2(Tokens.of("alice", "vision")).contentType("application/yaml")
                .body(yaml(TF_DIST_TRAIN.replace("nvidia.com/gpu: 1\n", "nvidia.com/mig-huge: 1\n")))
                .when().post("/v1/jobs").then().statusCode(422)
                .body("errors.field", hasItem("spec.tasks[0].template.spec.containers[0].resources.limits.nvidia.com/mig-huge"));
        given().auth().oauth2(Tokens.of("alice", "vision")).contentType("application/yaml")
                .body(yaml(TF_DIST_TRAIN.replace("nvidia.com/gpu: 1\n", "nvidia.com/mig-1g.10gb: 1\n" + " ".repeat(18) + "nvidia.com/mig-2g.20gb: 1\n")))
                .when().post("/v1/jobs").then().statusCode(422)
                .body("errors.field", hasItem("spec.tasks[0].template.spec.containers[0].resources.limits"));
        assertThat(db.queryLong("select count(*) from job")).isEqualTo(before);
    }

    @Test
    void otherKindsAndBadQuantitiesAreRefusedByName() {
        long before = db.queryLong("select count(*) from job");
        given().auth().oauth2(Tokens.of("alice", "vision")).contentType("application/yaml")
                .body(yaml(TF_DIST_TRAIN.replace("kind: Job", "kind: Deployment")))
                .when().post("/v1/jobs").then().statusCode(422)
                .contentType(startsWith("application/problem+json"))
                .body("detail", containsString("kind Job"));
        given().auth().oauth2(Tokens.of("alice", "vision")).contentType("application/yaml")
                .body(yaml(TF_DIST_TRAIN.replace("memory: 32Gi", "memory: lots")))
                .when().post("/v1/jobs").then().statusCode(422)
                .body("errors.field", hasItem("spec.tasks[1].template.spec.containers[0].resources.limits.memory"));
        given().auth().oauth2(Tokens.of("alice", "vision")).contentType("application/yaml")
                .body(yaml("apiVersion: [unclosed"))
                .when().post("/v1/jobs").then().statusCode(400)
                .contentType(startsWith("application/problem+json"));
        assertThat(db.queryLong("select count(*) from job")).isEqualTo(before);
    }
}
