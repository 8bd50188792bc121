package dev.gantry.e2e;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.restassured.http.ContentType;
import io.restassured.path.json.JsonPath;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A move carried out end to end by node agents (issue 23): two packaged agents run two simulated
 * 8-GPU nodes as real processes, sharing one checkpoint directory (as nodes share a file system).
 * Eight migratable 2-GPU jobs fill them; two end on each node, which leaves 4 + 4 GPUs free and no
 * node with 8; an 8-GPU job arrives. Placement moves two jobs: their agent sends SIGTERM with the
 * job's grace, each job writes its checkpoint and exits, and each starts again on the other node as
 * a new attempt that resumes from its checkpoint; the 8-GPU job runs on the node they left. The
 * disruption budget here lets jobs placed a moment ago move (the default protects them 10 minutes),
 * and the solver has the balanced profile's 2 s: with six JVMs and eight Python processes on a
 * loaded machine, the fast profile's 200 ms (half of it for the moves that place a head of the
 * line) left every window to the greedy fallback, which never moves anything.
 */
@ExtendWith(RunningGantry.class)
@RunningGantry.PlacementProperties({"gantry.placement.migration.protection=0s", "gantry.placement.profile=balanced",
        "gantry.placement.window=3s"})
class NodeAgentMigrationIT {

    private static final List<String> NODES = List.of("e2e-move-a", "e2e-move-b");
    private static final String MODEL = "H100";
    private static final int GRACE = 15;
    /**
     * Counts steps of 0.3 s until {@code end} appears in its checkpoint directory; SIGTERM saves its
     * step there and exits; started again, it resumes from the step it saved.
     */
    private static final String TRAIN = """
            import os, signal, sys, time
            d = os.environ["GANTRY_CHECKPOINT_DIR"]
            ckpt = os.path.join(d, "step")
            step = 0
            if os.path.exists(ckpt):
                step = int(open(ckpt).read())
                print(f"resumed from step {step} (attempt {os.environ['GANTRY_ATTEMPT']}, gpus {os.environ['CUDA_VISIBLE_DEVICES']})", flush=True)
            else:
                print(f"starting at step 0 (attempt {os.environ['GANTRY_ATTEMPT']})", flush=True)
            def on_term(signum, frame):
                with open(ckpt + ".tmp", "w") as f:
                    f.write(str(step))
                os.replace(ckpt + ".tmp", ckpt)
                print(f"SIGTERM: checkpointed step {step}, exiting", flush=True)
                sys.exit(0)
            signal.signal(signal.SIGTERM, on_term)
            while not os.path.exists(os.path.join(d, "end")):
                time.sleep(0.3)
                step += 1
            print(f"done after {step} steps", flush=True)
            """;

    private static final List<Process> agents = new ArrayList<>();
    private static final Map<String, Path> agentLogs = new LinkedHashMap<>();
    private static Path checkpoints;

    @BeforeAll
    static void startAgents() throws Exception {
        Path root = Path.of(System.getProperty("gantry.root", ".."));
        Path jar = root.resolve("node-agent/target/gantry-node-agent-0.1.0-SNAPSHOT.jar");
        if (!Files.exists(jar)) {
            throw new IllegalStateException("not packaged: " + jar + " (run mvn package from the repository root)");
        }
        Path dir = Files.createDirectories(Path.of("target", "e2e-logs", NodeAgentMigrationIT.class.getSimpleName()));
        checkpoints = Files.createDirectories(dir.resolve("shared-checkpoints"));
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        for (String node : NODES) {
            Path token = dir.resolve(node + ".token");
            Files.writeString(token, RunningGantry.agentToken(node));
            Path log = dir.resolve(node + ".log");
            agentLogs.put(node, log);
            agents.add(new ProcessBuilder(java, "-jar", jar.toString(), "--node", node, "--simulate", "8:" + MODEL,
                    "--inventory", RunningGantry.url("node-inventory-service"), "--placement", RunningGantry.url("placement-service"),
                    "--token-file", token.toString(), "--work-dir", dir.resolve(node + "-work").toString(),
                    "--checkpoint-dir", checkpoints.toString(), "--address", "127.0.0.1", "--heartbeat", "5s", "--poll", "20s")
                    .redirectErrorStream(true).redirectOutput(log.toFile()).start());
        }
        given().baseUri(RunningGantry.url("quota-service")).auth().oauth2(RunningGantry.adminToken()).contentType(ContentType.JSON)
                .body("{\"capability\": {\"gpus\": 64}, \"members\": {\"teams\": [\"vision\"]}}")
                .when().put("/v1/queues/agent-moves").then().statusCode(200);
        for (String node : NODES) {
            await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(250)).until(() ->
                    given().baseUri(RunningGantry.url("node-inventory-service")).auth().oauth2(RunningGantry.adminToken())
                            .when().get("/v1/nodes/" + node).statusCode() == 200);
        }
    }

    @AfterAll
    static void stopAgents() throws Exception {
        for (Process agent : agents) {
            agent.destroy();
            if (!agent.waitFor(20, java.util.concurrent.TimeUnit.SECONDS)) {
                agent.destroyForcibly();
            }
        }
    }

    private static String alice() {
        return RunningGantry.token("alice", "vision");
    }

    private static String submit(String name, int gpus, boolean migratable, List<String> command) throws Exception {
        var mapper = new com.fasterxml.jackson.databind.ObjectMapper();
        Map<String, Object> body = new LinkedHashMap<>(Map.of("name", name, "queue", "agent-moves", "gpuModels", List.of(MODEL),
                "taskGroups", List.of(Map.of("name", "train", "replicas", 1, "gpusPerReplica", gpus, "cpuMillis", 100, "memoryMiB", 64,
                        "command", command))));
        if (migratable) {
            body.putAll(Map.of("migratable", true, "checkpointable", true, "checkpointGraceSeconds", GRACE));
        }
        var response = given().baseUri(RunningGantry.url("admission-service")).auth().oauth2(alice()).contentType(ContentType.JSON)
                .body(mapper.writeValueAsString(body)).when().post("/v1/jobs");
        assertThat(response.statusCode()).as(response.asString()).isEqualTo(201);
        return response.path("id");
    }

    private static JsonPath job(String id) {
        return given().baseUri(RunningGantry.url("admission-service")).auth().oauth2(alice())
                .when().get("/v1/jobs/" + id).then().statusCode(200).extract().jsonPath();
    }

    private static JsonPath history(String id) {
        return given().baseUri(RunningGantry.url("admission-service")).auth().oauth2(alice())
                .when().get("/v1/jobs/" + id + "/history").then().statusCode(200).extract().jsonPath();
    }

    private static JsonPath logs(String id, Long attempt) {
        return given().baseUri(RunningGantry.url("admission-service")).auth().oauth2(alice())
                .when().get("/v1/jobs/" + id + "/logs" + (attempt == null ? "" : "?attempt=" + attempt)).then().statusCode(200)
                .extract().jsonPath();
    }

    private static String nodeOf(String id) {
        return job(id).getString("placement.tasks[0].node");
    }

    private static void end(String id) throws IOException {
        Files.createDirectories(checkpoints.resolve(id));
        Files.writeString(checkpoints.resolve(id).resolve("end"), "");
    }

    private static boolean ended(String id) {
        return Set.of("SUCCEEDED", "FAILED", "CANCELLED").contains(job(id).getString("state"));
    }

    private String agentLogs() throws IOException {
        StringBuilder out = new StringBuilder();
        for (var e : agentLogs.entrySet()) {
            out.append("--- ").append(e.getKey()).append('\n').append(Files.readString(e.getValue()));
        }
        return out.toString();
    }

    @Test
    void twoCheckpointingJobsMoveToTheOtherNodeResumeFromTheirCheckpointsAndTheEightGpuJobRuns() throws Exception {
        List<String> command = List.of("python3", "-c", TRAIN);
        List<String> jobs = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            jobs.add(submit("mover-" + i, 2, true, command));
        }
        // every job runs (its first output shipped), four on each node
        await().atMost(Duration.ofSeconds(120)).pollInterval(Duration.ofMillis(500)).until(() -> jobs.stream()
                .allMatch(id -> String.join("", logs(id, null).getList("tasks.text", String.class)).contains("starting at step 0")));
        Map<String, List<String>> byNode = new LinkedHashMap<>();
        jobs.forEach(id -> byNode.computeIfAbsent(nodeOf(id), n -> new ArrayList<>()).add(id));
        assertThat(byNode.keySet()).containsExactlyInAnyOrderElementsOf(NODES);
        assertThat(byNode.values()).allSatisfy(on -> assertThat(on).hasSize(4));

        // two end on each node: 4 + 4 GPUs free, no node with 8
        List<String> staying = new ArrayList<>();
        for (List<String> on : byNode.values()) {
            end(on.get(0));
            end(on.get(1));
            staying.addAll(on.subList(2, 4));
        }
        for (List<String> on : byNode.values()) {
            for (String id : on.subList(0, 2)) {
                await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(300)).until(() -> ended(id));
                assertThat(job(id).getString("state")).isEqualTo("SUCCEEDED");
            }
        }

        String wide = submit("wide", 8, false, List.of("sh", "-c", "echo \"wide ran on $CUDA_VISIBLE_DEVICES\""));
        await().atMost(Duration.ofSeconds(180)).pollInterval(Duration.ofMillis(500)).until(() -> ended(wide));
        assertThat(job(wide).getString("state")).as("the 8-GPU job; agents:\n%s", agentLogs()).isEqualTo("SUCCEEDED");
        String wideNode = nodeOf(wide);

        // two of the staying jobs moved off the node the 8-GPU job ran on, each step in their history
        List<String> moved = staying.stream().filter(id -> history(id).getList("reason", String.class).stream()
                .anyMatch(r -> r != null && r.startsWith("migrated from"))).toList();
        assertThat(moved).as("jobs moved; agents:\n%s", agentLogs()).hasSize(2);
        for (String id : moved) {
            List<String> reasons = history(id).getList("reason", String.class);
            List<String> states = history(id).getList("state", String.class);
            assertThat(reasons).anySatisfy(r -> assertThat(r).startsWith("migrating from " + wideNode + " to ").contains("checkpointing"));
            assertThat(reasons).anySatisfy(r -> assertThat(r).startsWith("migrated from " + wideNode + " to "));
            assertThat(states.subList(states.indexOf("PLACED"), states.size())).as("moved while placed: never back in line, never failed")
                    .doesNotContain("QUEUED", "FAILED");
            assertThat(nodeOf(id)).isNotEqualTo(wideNode);
        }

        // the moved jobs and the others run on; told to end, all succeed, the moved ones from their checkpoints
        for (String id : staying) {
            end(id);
        }
        for (String id : staying) {
            await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(300)).until(() -> ended(id));
            assertThat(job(id).getString("state")).as("job %s; agents:\n%s", id, agentLogs()).isEqualTo("SUCCEEDED");
        }
        for (String id : moved) {
            List<Long> attempts = logs(id, null).getList("attempts", Long.class);
            assertThat(attempts).as("a new attempt after the move").hasSize(2);
            assertThat(job(id).getInt("attempts")).isEqualTo(2);
            String first = logs(id, attempts.get(0)).getString("tasks[0].text");
            Matcher saved = Pattern.compile("SIGTERM: checkpointed step (\\d+), exiting").matcher(first);
            assertThat(saved.find()).as("the first attempt's output:\n%s", first).isTrue();
            String second = logs(id, null).getString("tasks[0].text");
            assertThat(second).as("the second attempt's output").contains("resumed from step " + saved.group(1)).contains("done after")
                    .doesNotContain("starting at step 0");
            assertThat(logs(id, null).getString("tasks[0].node")).isNotEqualTo(wideNode);
        }
        assertThat(Files.readString(agentLogs.get(wideNode))).contains("stopping (grace");
    }
}
