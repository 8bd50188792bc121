package dev.gantry.e2e;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.restassured.http.ContentType;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The alerts in deploy/k8s/monitoring query series the services really export: every gantry_*
 * name of an alert expression is on some service's /q/metrics once the cluster has a placed job
 * and a waiting one (labelled gauges such as gantry_placement_gpu_allocated only exist then).
 * deploy-tests checks the same names, and the dashboard's, against its list without running anything.
 */
@ExtendWith(RunningGantry.class)
class AlertMetricsIT {

    private static final Pattern METRIC = Pattern.compile("\\bgantry_[A-Za-z0-9_:]+");

    /** One 8-GPU node; a 4-GPU job that fits and a 16-GPU gang that never can, in a queue that admits both. */
    @BeforeAll
    static void placedAndWaitingJobs() {
        given().baseUri(RunningGantry.url("node-inventory-service")).auth().oauth2(RunningGantry.adminToken()).contentType(ContentType.JSON)
                .body("""
                        {"nodes": [{"name": "alert-dgx-01", "gpuModel": "A100-SXM4-80GB", "gpus": 8,
                          "nvlinkIslands": [[0,1,2,3,4,5,6,7]], "cpuMillis": 128000, "memoryMiB": 1000000,
                          "topology": {"zone": "z1", "spine": "sp1", "leaf": "lf1"}, "schedulable": true}]}
                        """)
                .when().post("/v1/cluster:apply")
                .then().statusCode(200);
        given().baseUri(RunningGantry.url("quota-service")).auth().oauth2(RunningGantry.adminToken()).contentType(ContentType.JSON)
                .body("{\"capability\": {\"gpus\": 64}, \"members\": {\"teams\": [\"vision\"]}}")
                .when().put("/v1/queues/alerts")
                .then().statusCode(200);
        String placed = submit("""
                {"name": "fits", "queue": "alerts", "taskGroups": [{"name": "worker", "replicas": 1, "gpusPerReplica": 4}]}
                """);
        String waiting = submit("""
                {"name": "never-fits", "queue": "alerts", "minAvailable": 2,
                 "taskGroups": [{"name": "worker", "replicas": 2, "gpusPerReplica": 8}]}
                """);
        await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(500)).until(() ->
                given().baseUri(RunningGantry.url("placement-service")).auth().oauth2(RunningGantry.token("alice", "vision")).when().get("/v1/allocations")
                        .then().statusCode(200).extract().jsonPath().getList("jobId").contains(placed)
                && given().baseUri(RunningGantry.url("placement-service")).auth().oauth2(RunningGantry.adminToken()).when().get("/v1/pending-jobs")
                        .then().statusCode(200).extract().jsonPath().getList("jobId").contains(waiting));
    }

    private static String submit(String job) {
        return given().baseUri(RunningGantry.url("admission-service"))
                .auth().oauth2(RunningGantry.token("alice", "vision"))
                .contentType(ContentType.JSON).body(job)
                .when().post("/v1/jobs")
                .then().statusCode(201)
                .extract().path("id");
    }

    @Test
    void every_metric_an_alert_queries_is_exported_by_a_service() throws IOException {
        Set<String> names = alertMetrics();
        assertThat(names).contains("gantry_placement_oldest_pending_seconds", "gantry_placement_gpu_allocated",
                "gantry_placement_window_overruns_total", "gantry_placement_plans_rejected_total");
        Set<String> missing = new TreeSet<>(names);
        // windows run every second in this setup: give the gauges a few windows to appear
        try {
            await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofSeconds(1)).until(() -> {
                missing.removeIf(AlertMetricsIT::exported);
                return missing.isEmpty();
            });
        } catch (org.awaitility.core.ConditionTimeoutException e) {
            // the assertion below names what is missing
        }
        assertThat(missing).as("alert metrics no service exports on /q/metrics").isEmpty();
    }

    /** The gantry_* names in the expr of every rule of deploy/k8s/monitoring/prometheus-rules.yaml. */
    static Set<String> alertMetrics() throws IOException {
        Path rules = Path.of(System.getProperty("gantry.root", "..")).resolve("deploy/k8s/monitoring/prometheus-rules.yaml");
        List<String> lines = Files.readAllLines(rules);
        Set<String> names = new TreeSet<>();
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i);
            int at = line.indexOf("expr:");
            if (at < 0 || line.trim().startsWith("#")) {
                continue;
            }
            StringBuilder expr = new StringBuilder(line.substring(at + "expr:".length()));
            // a block scalar (expr: |) continues on the lines indented deeper than "expr:"
            while (i + 1 < lines.size() && (lines.get(i + 1).isBlank() || indent(lines.get(i + 1)) > at)) {
                expr.append('\n').append(lines.get(++i));
            }
            Matcher m = METRIC.matcher(expr);
            while (m.find()) {
                names.add(m.group());
            }
        }
        return names;
    }

    private static int indent(String line) {
        return line.length() - line.stripLeading().length();
    }

    /** Whether some service's /q/metrics has a sample of this series (name followed by labels or a value). */
    private static boolean exported(String name) {
        for (String service : RunningGantry.SERVICES.keySet()) {
            String metrics = given().baseUri(RunningGantry.url(service)).when().get("/q/metrics")
                    .then().statusCode(200).extract().asString();
            if (Pattern.compile("(?m)^" + Pattern.quote(name) + "[{ ]").matcher(metrics).find()) {
                return true;
            }
        }
        return false;
    }
}
