package dev.gantry.e2e;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.hamcrest.Matchers.startsWith;

import io.restassured.http.ContentType;
import io.restassured.path.json.JsonPath;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The whole flow on a 16-node cluster file (leaf lf-a: 8 DGX A100 with NVLink and InfiniBand;
 * leaf lf-b: 8 PCIe V100 with NVLink pairs) with the four packaged services: a Volcano manifest
 * runs where it asks to, an impossible gang says why it waits, priority preempts and the victim
 * comes back, quota refuses at the door, cancelling frees GPUs, and a placement-service crash
 * loses no job and double-books no GPU. The steps share the cluster, so they run in order.
 */
@ExtendWith(RunningGantry.class)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class SchedulingScenarioIT {

    /** The seed's tf-dist-train manifest, with Gantry's annotation asking for ps and worker on one node. */
    private static final String TF_DIST_TRAIN = RunningGantry.seedTfDistTrain()
            .replace("  labels:\n", "  annotations:\n    gantry.dev/network-required: node\n  labels:\n");

    private static String token;

    @BeforeAll
    static void clusterAndQueues() throws Exception {
        token = RunningGantry.token("alice", "vision");
        String cluster = Files.readString(Path.of("src/test/resources/cluster-16.json"));
        given().baseUri(RunningGantry.url("node-inventory-service")).auth().oauth2(RunningGantry.adminToken()).contentType(ContentType.JSON).body(cluster)
                .when().post("/v1/cluster:apply").then().statusCode(200);
        given().baseUri(RunningGantry.url("quota-service")).auth().oauth2(RunningGantry.adminToken()).contentType(ContentType.JSON).body("{\"value\": 1000}")
                .when().put("/v1/priority-classes/high-priority").then().statusCode(200);
        for (String queue : List.of("normal", "batch", "big")) {
            given().baseUri(RunningGantry.url("quota-service")).auth().oauth2(RunningGantry.adminToken()).contentType(ContentType.JSON)
                    .body("{\"members\": {\"teams\": [\"vision\"]}, \"limits\": {\"maxPriority\": 1000}}") // its jobs may ask up to 1000
                    .when().put("/v1/queues/" + queue).then().statusCode(200);
        }
        given().baseUri(RunningGantry.url("quota-service")).auth().oauth2(RunningGantry.adminToken()).contentType(ContentType.JSON)
                .body("{\"capability\": {\"gpus\": 8}, \"members\": {\"teams\": [\"vision\"]}}")
                .when().put("/v1/queues/capped").then().statusCode(200);
    }

    private static String submit(String json) {
        return given().baseUri(RunningGantry.url("admission-service")).auth().oauth2(token).contentType(ContentType.JSON).body(json)
                .when().post("/v1/jobs").then().statusCode(201).extract().path("id");
    }

    private static String job(String name, String queue, int priority, int replicas, int gpus, String model, long runtimeSeconds) {
        return """
                {"name": "%s", "queue": "%s", "priority": %d, "gpuModels": [%s], "preemptible": true,
                 "estimatedRuntimeSeconds": %d,
                 "taskGroups": [{"name": "worker", "replicas": %d, "gpusPerReplica": %d, "cpuMillis": 4000, "memoryMiB": 16000}]}
                """.formatted(name, queue, priority, model == null ? "" : "\"" + model + "\"", runtimeSeconds, replicas, gpus);
    }

    private static JsonPath view(String id) {
        return given().baseUri(RunningGantry.url("admission-service")).auth().oauth2(token).when().get("/v1/jobs/" + id)
                .then().statusCode(200).extract().jsonPath();
    }

    private static String state(String id) {
        return view(id).getString("state");
    }

    private static void cancel(String id) {
        given().baseUri(RunningGantry.url("admission-service")).auth().oauth2(token).when().delete("/v1/jobs/" + id)
                .then().statusCode(org.hamcrest.Matchers.anyOf(org.hamcrest.Matchers.is(200), org.hamcrest.Matchers.is(202),
                        org.hamcrest.Matchers.is(204)));
    }

    private static List<Map<String, Object>> allocations() {
        return given().baseUri(RunningGantry.url("placement-service")).auth().oauth2(RunningGantry.token("alice", "vision")).when().get("/v1/allocations")
                .then().statusCode(200).extract().jsonPath().getList("$");
    }

    private static List<Map<String, Object>> allocationsOf(String id) {
        return allocations().stream().filter(a -> id.equals(a.get("jobId"))).toList();
    }

    @Test
    @Order(1)
    void theSeedVolcanoJobRunsWithPsAndWorkerOnOneA100Node() {
        String id = given().baseUri(RunningGantry.url("admission-service")).auth().oauth2(token).contentType("application/yaml")
                .body(TF_DIST_TRAIN.getBytes(StandardCharsets.UTF_8))
                .when().post("/v1/jobs").then().statusCode(201).extract().path("id");
        await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(250)).until(() -> Set.of("PLACED", "RUNNING")
                .contains(state(id)));
        List<Map<String, Object>> tasks = allocationsOf(id);
        assertThat(tasks).extracting(a -> a.get("task")).containsExactlyInAnyOrder("ps-0", "worker-0");
        assertThat(tasks).extracting(a -> a.get("node")).as("ps and worker on one node").containsOnly(tasks.get(0).get("node"));
        assertThat((String) tasks.get(0).get("node")).startsWith("dgx-a100-");
        assertThat(tasks).extracting(a -> ((List<?>) a.get("gpus")).size()).containsExactlyInAnyOrder(1, 2);
    }

    @Test
    @Order(2)
    void aGangLargerThanTheClusterWaitsWithAReasonNamingTheShortfall() {
        String id = submit(job("too-wide", "big", 0, 20, 8, null, 600)); // 160 GPUs; the cluster has 128
        await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(500)).until(() -> view(id).getString("pendingReason") != null);
        JsonPath job = view(id);
        assertThat(job.getString("state")).isEqualTo("QUEUED");
        assertThat(job.getString("pendingReason")).contains("160");
        cancel(id);
        await().atMost(Duration.ofSeconds(30)).until(() -> "CANCELLED".equals(state(id)));
    }

    @Test
    @Order(3)
    void aJobOverItsQueuesCapabilityIsRefusedAtAdmission() {
        given().baseUri(RunningGantry.url("admission-service")).auth().oauth2(token).contentType(ContentType.JSON)
                .body(job("over-cap", "capped", 0, 2, 8, null, 60))
                .when().post("/v1/jobs").then().statusCode(422)
                .contentType(startsWith("application/problem+json"))
                .body("detail", startsWith("ExceedsQueueCapability"));
    }

    @Test
    @Order(4)
    void aHighPriorityJobPreemptsALowOneWhichRequeuesAndRunsAgainLater() {
        String low = submit(job("low-fill-v100", "batch", 0, 8, 8, "V100-PCIE-32GB", 3000)); // the whole V100 leaf, 30 s
        await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(250)).until(() -> "PLACED".equals(state(low)));
        String submittedAt = view(low).getString("submittedAt");

        // as wide as the victim: a preemption must make room the preemptor then uses (the engine never
        // evicts 64 GPUs for a job that needs 8), so the whole V100 leaf for 5 s
        String high = submit(job("high-v100", "batch", 1000, 8, 8, "V100-PCIE-32GB", 500));
        List<String> lowStates = new ArrayList<>();
        await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(200)).until(() -> {
            lowStates.add(state(low));
            return Set.of("PLACED", "RUNNING", "SUCCEEDED").contains(state(high));
        });
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(200)).until(() -> {
            lowStates.add(state(low));
            return lowStates.contains("QUEUED");
        });
        assertThat(view(low).getString("pendingReason")).as("a waiting job says why").isNotBlank();
        assertThat(view(low).getString("submittedAt")).as("keeps its place in line").isEqualTo(submittedAt);

        // once the high-priority job is done, the victim runs again
        await().atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofMillis(500)).until(() -> "PLACED".equals(state(low)));
        assertThat(allocationsOf(low)).hasSize(8);
    }

    @Test
    @Order(5)
    void cancellingARunningJobFreesItsGpusForTheNextJob() throws InterruptedException {
        String low = allocations().stream().filter(a -> ((String) a.get("node")).startsWith("v100-"))
                .map(a -> (String) a.get("jobId")).findFirst().orElseThrow();
        String next = submit(job("next-v100", "batch", 0, 8, 8, "V100-PCIE-32GB", 3000));
        Thread.sleep(3000); // a window or two
        assertThat(state(next)).as("the V100 leaf is full").isEqualTo("QUEUED");

        cancel(low);
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(250)).until(() -> allocationsOf(low).isEmpty());
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(250)).until(() -> "PLACED".equals(state(next)));
        assertThat(allocationsOf(next)).extracting(a -> (String) a.get("node")).allMatch(n -> n.startsWith("v100-"));
        cancel(next);
        await().atMost(Duration.ofSeconds(30)).until(() -> allocationsOf(next).isEmpty());
    }

    @Test
    @Order(6)
    void aPlacementServiceCrashLosesNoJobAndDoubleBooksNoGpu() throws Exception {
        ConcurrentLinkedQueue<String> doubleBooked = new ConcurrentLinkedQueue<>();
        AtomicBoolean watching = new AtomicBoolean(true);
        Thread watcher = new Thread(() -> {
            while (watching.get()) {
                try {
                    Map<String, String> holder = new HashMap<>();
                    for (Map<String, Object> a : allocations()) {
                        for (Object gpu : (List<?>) a.get("gpus")) {
                            String key = a.get("node") + "/" + gpu;
                            String previous = holder.put(key, (String) a.get("jobId"));
                            if (previous != null && !previous.equals(a.get("jobId"))) {
                                doubleBooked.add(key + " held by " + previous + " and " + a.get("jobId"));
                            }
                        }
                    }
                    Thread.sleep(150);
                } catch (Exception placementDown) {
                    // the service is restarting: keep watching
                }
            }
        });
        watcher.start();
        List<String> ids = new ArrayList<>();
        try {
            for (int i = 0; i < 30; i++) {
                ids.add(submit(job("burst-" + i, "batch", i % 3, 1, 4, null, 400 + 50L * (i % 5)))); // 4-6 s each
                if (i == 12) {
                    RunningGantry.killAndRestart("placement-service");
                }
            }
            await().atMost(Duration.ofSeconds(180)).pollInterval(Duration.ofSeconds(1)).until(() ->
                    ids.stream().allMatch(id -> "SUCCEEDED".equals(state(id))));
        } finally {
            watching.set(false);
            watcher.join();
        }
        assertThat(doubleBooked).as("no GPU held by two jobs at once").isEmpty();
    }
}
