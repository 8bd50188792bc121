package dev.gantry.e2e;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.restassured.http.ContentType;
import io.restassured.path.json.JsonPath;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Two placement processes on one database and one durable consumer, as during a rollout or with a
 * second replica started by mistake: the one that started binding last holds the leadership epoch,
 * the other's binds are fenced off (it stops binding and counts it), and no GPU is ever booked twice.
 * Its own class: the first process ends deposed, which no other test should inherit.
 */
@ExtendWith(RunningGantry.class)
class TwoPlacementProcessesIT {

    private static final String MODEL = "L4-TWIN";
    /** Next to the four services (19085 by default), so a run with its own port base does not meet another's replica. */
    private static final int REPLICA_PORT = RunningGantry.PORT_BASE + 5;
    private static final Pattern FENCED = Pattern.compile("(?m)^gantry_placement_fenced_writes_total(?:\\{[^}]*})? ([0-9.E]+)$");

    @Test
    void aSecondProcessFencesTheFirstAndNoGpuIsBookedTwice() throws Exception {
        given().baseUri(RunningGantry.url("quota-service")).auth().oauth2(RunningGantry.adminToken()).contentType(ContentType.JSON)
                .body("{\"capability\": {\"gpus\": 64}, \"members\": {\"teams\": [\"twin\"]}, \"limits\": {\"maxPriority\": 1000}}")
                .when().put("/v1/queues/twin").then().statusCode(200);
        for (String node : List.of("twin-01", "twin-02")) {
            given().baseUri(RunningGantry.url("node-inventory-service")).auth().oauth2(RunningGantry.adminToken())
                    .contentType(ContentType.JSON)
                    .body("{\"gpuModel\": \"" + MODEL + "\", \"gpus\": 8, \"topology\": {\"zone\": \"z1\", \"spine\": \"sp1\", \"leaf\": \"lf1\"}}")
                    .when().put("/v1/nodes/" + node).then().statusCode(200);
        }

        List<String> jobs = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            jobs.add(submit("before-" + i));
        }
        awaitAllocated(jobs);
        String placement = RunningGantry.url("placement-service");
        assertThat(fencedWrites(placement)).as("one process alone is never fenced").isZero();

        String replica = RunningGantry.launchReplica("placement-service", REPLICA_PORT);
        // jobs arrive one by one; each process consumes some of them and both plan every window, so
        // the replica soon binds (taking the next epoch) and the first one's next bind is fenced
        for (int i = 0; i < 12 && fencedWrites(placement) + fencedWrites(replica) == 0; i++) {
            jobs.add(submit("after-" + i));
            Thread.sleep(1000);
        }
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(500))
                .until(() -> fencedWrites(placement) + fencedWrites(replica) > 0);
        assertThat(fencedWrites(placement)).as("the first process, whose epoch the replica took, is fenced").isPositive();
        assertThat(fencedWrites(replica)).as("the replica holds the newest epoch").isZero();

        jobs.add(submit("last"));
        awaitAllocated(jobs);

        List<Map<String, Object>> allocations = allocations();
        Map<String, Integer> perJob = new HashMap<>();
        Set<String> gpus = new HashSet<>();
        for (Map<String, Object> allocation : allocations) {
            perJob.merge((String) allocation.get("jobId"), 1, Integer::sum);
            for (Object gpu : (List<?>) allocation.get("gpus")) {
                assertThat(gpus.add(allocation.get("node") + "/" + gpu)).as("GPU %s/%s booked once", allocation.get("node"), gpu).isTrue();
            }
        }
        for (String job : jobs) {
            assertThat(perJob.get(job)).as("job %s bound exactly once", job).isEqualTo(1);
        }
        assertThat(RunningGantry.process("placement-service@" + REPLICA_PORT).isAlive()).isTrue();

        // every replica answers start forecasts (issue 20): a gang of both nodes waits; the replica leads, plans
        // and forecasts it; the first process, deposed, never computes one and answers from the database
        String gang = submit("gang", 2, 8);
        await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(500)).until(() -> forecastItem(placement, gang) != null);
        JsonPath fromDeposed = forecasts(placement, gang);
        assertThat(fromDeposed.getBoolean("stale")).isFalse();
        assertThat(fromDeposed.getString("computedAt")).isNotNull();
        Map<String, Object> item = forecastItem(placement, gang);
        assertThat(item.get("basis")).as("a forecast the leader made: it waits for the 1-GPU jobs").isIn("reservation", "releases", "unknown");
        assertThat(forecastItem(replica, gang)).as("both processes give the leader's forecast").isNotNull();
        JsonPath view = given().baseUri(RunningGantry.url("admission-service")).auth().oauth2(RunningGantry.token("tess", "twin"))
                .when().get("/v1/jobs/" + gang).then().statusCode(200).extract().jsonPath();
        assertThat(view.getString("startForecast.note")).as("admission asks the first process, which answers")
                .isNotEqualTo("unknown: placement-service did not answer").isNotEqualTo("unknown: placement has not forecast yet")
                .doesNotStartWith("unknown: not forecast");
        given().baseUri(RunningGantry.url("admission-service")).auth().oauth2(RunningGantry.token("tess", "twin"))
                .when().delete("/v1/jobs/" + gang).then().statusCode(200);
    }

    private static JsonPath forecasts(String url, String job) {
        return given().baseUri(url).auth().oauth2(RunningGantry.adminToken()).queryParam("job", job)
                .when().get("/v1/start-forecasts").then().statusCode(200).extract().jsonPath();
    }

    /** The forecast item of {@code job} as the process at {@code url} answers, or null. */
    private static Map<String, Object> forecastItem(String url, String job) {
        List<Map<String, Object>> items = forecasts(url, job).getList("items");
        return items == null || items.isEmpty() ? null : items.getFirst();
    }

    private static String submit(String name) {
        return submit(name, 1, 1);
    }

    private static String submit(String name, int replicas, int gpus) {
        return given().baseUri(RunningGantry.url("admission-service")).auth().oauth2(RunningGantry.token("tess", "twin"))
                .contentType(ContentType.JSON)
                .body("""
                        {"name": "twin-%s", "queue": "twin", "priority": 100, "estimatedRuntimeSeconds": 1000000,
                         "gpuModels": ["%s"],
                         "taskGroups": [{"name": "worker", "replicas": %d, "gpusPerReplica": %d, "cpuMillis": 1000, "memoryMiB": 1000}]}
                        """.formatted(name, MODEL, replicas, gpus))
                .when().post("/v1/jobs").then().statusCode(201).extract().path("id");
    }

    private static List<Map<String, Object>> allocations() {
        return given().baseUri(RunningGantry.url("placement-service")).auth().oauth2(RunningGantry.adminToken())
                .when().get("/v1/allocations").then().statusCode(200).extract().jsonPath().getList("$");
    }

    private static void awaitAllocated(List<String> jobs) {
        await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(500)).until(() -> {
            Set<Object> allocated = new HashSet<>(JsonPath.from(given().baseUri(RunningGantry.url("placement-service"))
                    .auth().oauth2(RunningGantry.adminToken()).when().get("/v1/allocations").asString()).getList("jobId"));
            return allocated.containsAll(jobs);
        });
    }

    /** {@code gantry_placement_fenced_writes_total} of one process (0 before its first fenced write). */
    private static double fencedWrites(String url) {
        Matcher m = FENCED.matcher(given().baseUri(url).when().get("/q/metrics").asString());
        return m.find() ? Double.parseDouble(m.group(1)) : 0;
    }
}
