package dev.gantry.e2e;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.restassured.http.ContentType;
import io.restassured.path.json.JsonPath;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Real jobs without Kubernetes (issue 21): the packaged node agent runs as a process of its own with
 * eight simulated A100s, registers its node, and runs the tasks placement binds to it as real
 * processes; a job submitted to admission ends SUCCEEDED or FAILED by what its processes did.
 */
@ExtendWith(RunningGantry.class)
class NodeAgentIT {

    private static final String NODE = "e2e-agent-node";
    private static final Pattern LINE = Pattern.compile("rank=(\\d+) world=(\\d+) gpus=([0-9,]*)");

    private static Process agent;
    private static Path work;
    private static Path agentLog;

    /** Starts the packaged agent as a process of its own; its output goes to {@code <name>.log}. */
    private static void launchAgent(String name) throws IOException {
        Path root = Path.of(System.getProperty("gantry.root", ".."));
        Path jar = root.resolve("node-agent/target/gantry-node-agent-0.1.0-SNAPSHOT.jar");
        if (!Files.exists(jar)) {
            throw new IllegalStateException("not packaged: " + jar + " (run mvn package from the repository root)");
        }
        Path dir = Files.createDirectories(Path.of("target", "e2e-logs", NodeAgentIT.class.getSimpleName()));
        work = dir.resolve("agent-work");
        Path token = dir.resolve("agent.token");
        Files.writeString(token, RunningGantry.agentToken(NODE));
        agentLog = dir.resolve(name + ".log");
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        agent = new ProcessBuilder(java, "-jar", jar.toString(), "--node", NODE, "--simulate", "8:A100",
                "--inventory", RunningGantry.url("node-inventory-service"), "--placement", RunningGantry.url("placement-service"),
                "--token-file", token.toString(), "--work-dir", work.toString(), "--address", "127.0.0.1", "--heartbeat", "5s",
                "--poll", "20s", "--grace", "2s")
                .redirectErrorStream(true).redirectOutput(agentLog.toFile()).start();
    }

    @BeforeAll
    static void startAgent() throws Exception {
        launchAgent("node-agent");
        given().baseUri(RunningGantry.url("quota-service")).auth().oauth2(RunningGantry.adminToken()).contentType(ContentType.JSON)
                .body("{\"capability\": {\"gpus\": 64}, \"members\": {\"teams\": [\"vision\"]}}")
                .when().put("/v1/queues/agent-normal").then().statusCode(200);
        await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(250)).until(() ->
                given().baseUri(RunningGantry.url("node-inventory-service")).auth().oauth2(RunningGantry.adminToken())
                        .when().get("/v1/nodes/" + NODE).statusCode() == 200);
    }

    @AfterAll
    static void stopAgent() throws Exception {
        if (agent != null) {
            agent.destroy();
            if (!agent.waitFor(20, java.util.concurrent.TimeUnit.SECONDS)) {
                agent.destroyForcibly();
            }
        }
    }

    private static String submit(String name, String script) {
        String body = """
                {"name": "%s", "queue": "agent-normal", "minAvailable": 2, "gpuModels": ["A100"],
                 "taskGroups": [{"name": "worker", "replicas": 2, "gpusPerReplica": 2, "cpuMillis": 100, "memoryMiB": 64,
                                 "command": ["sh", "-c", %s]}]}
                """.formatted(name, quote(script));
        return given().baseUri(RunningGantry.url("admission-service")).auth().oauth2(RunningGantry.token("alice", "vision"))
                .contentType(ContentType.JSON).body(body).when().post("/v1/jobs").then().statusCode(201).extract().path("id");
    }

    private static String quote(String s) {
        return "\"" + s.replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
    }

    private static JsonPath job(String id) {
        return given().baseUri(RunningGantry.url("admission-service")).auth().oauth2(RunningGantry.token("alice", "vision"))
                .when().get("/v1/jobs/" + id).then().statusCode(200).extract().jsonPath();
    }

    private static String awaitEnd(String id) {
        await().atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofMillis(300)).until(() ->
                Set.of("SUCCEEDED", "FAILED", "CANCELLED").contains(job(id).getString("state")));
        return job(id).getString("state");
    }

    /** Every log file the agent wrote for a job, task name -> contents. */
    private static Map<String, String> logs(String jobId) throws IOException {
        Map<String, String> out = new java.util.TreeMap<>();
        Path dir = work.resolve("jobs").resolve(jobId);
        try (Stream<Path> files = Files.walk(dir)) {
            for (Path f : files.filter(p -> p.toString().endsWith(".log")).toList()) {
                out.put(f.getFileName().toString().replace(".log", ""), Files.readString(f, StandardCharsets.UTF_8));
            }
        }
        return out;
    }

    /** Processes whose environment names the job: what still runs of it. */
    private static List<Long> processesOf(String jobId) {
        List<Long> pids = new ArrayList<>();
        try (Stream<Path> procs = Files.list(Path.of("/proc"))) {
            for (Path p : procs.filter(p -> p.getFileName().toString().matches("\\d+")).toList()) {
                try {
                    if (new String(Files.readAllBytes(p.resolve("environ")), StandardCharsets.UTF_8).contains("GANTRY_JOB_ID=" + jobId)) {
                        String stat = Files.readString(p.resolve("stat"));
                        if (!stat.substring(stat.lastIndexOf(')') + 2).startsWith("Z")) {
                            pids.add(Long.parseLong(p.getFileName().toString()));
                        }
                    }
                } catch (IOException gone) {
                    // exited meanwhile, or not ours to read
                }
            }
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
        return pids;
    }

    @Test
    void theAgentRegistersItsSimulatedNodeAndTheCliShowsIt() {
        JsonPath node = given().baseUri(RunningGantry.url("node-inventory-service")).auth().oauth2(RunningGantry.adminToken())
                .when().get("/v1/nodes/" + NODE).then().statusCode(200).extract().jsonPath();
        assertThat(node.getInt("gpus")).isEqualTo(8);
        assertThat(node.getString("gpuModel")).isEqualTo("A100");
        assertThat(node.getString("source")).isEqualTo("AGENT");
        assertThat(node.getBoolean("simulated")).isTrue();
        assertThat(node.getString("health")).isEqualTo("READY");
        // a simulated 8-GPU node is as large as such GPUs come (16 cores a GPU), or the host when that is larger
        assertThat(node.getLong("cpuMillis")).isEqualTo(Math.max(8 * 16_000L, Runtime.getRuntime().availableProcessors() * 1000L));

        CliIT.Result nodes = CliIT.gantry("alice", "nodes");
        assertThat(nodes.exit()).as(nodes.err()).isZero();
        // the last column, MIG, is "-" for a node without MIG devices
        assertThat(nodes.row(NODE)).containsExactly(NODE, "A100", "8", nodes.row(NODE).get(3), "-", "READY", "agent,simulated", "-");
    }

    @Test
    void binGantryAgentRunsAnAgentForANodeWithATokenItMintsForThatNode() throws Exception {
        Path root = Path.of(System.getProperty("gantry.root", ".."));
        Path dir = Files.createDirectories(Path.of("target", "e2e-logs", NodeAgentIT.class.getSimpleName(), "cli-agent"));
        ProcessBuilder builder = new ProcessBuilder(root.resolve("bin/gantry").toString(), "agent", "--node", "cli-agent-node",
                "--simulate", "2:L4", "--heartbeat", "5s").redirectErrorStream(true).redirectOutput(dir.resolve("agent.log").toFile());
        builder.environment().put("GANTRY_JWT_DIR", RunningGantry.jwtDir().toString());
        builder.environment().put("GANTRY_AGENT_DIR", dir.toAbsolutePath().toString());
        builder.environment().put("GANTRY_NODE_INVENTORY_URL", RunningGantry.url("node-inventory-service"));
        builder.environment().put("GANTRY_PLACEMENT_URL", RunningGantry.url("placement-service"));
        Process cli = builder.start();
        try {
            await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(250)).until(() ->
                    given().baseUri(RunningGantry.url("node-inventory-service")).auth().oauth2(RunningGantry.adminToken())
                            .when().get("/v1/nodes/cli-agent-node").statusCode() == 200);
            JsonPath node = given().baseUri(RunningGantry.url("node-inventory-service")).auth().oauth2(RunningGantry.adminToken())
                    .when().get("/v1/nodes/cli-agent-node").then().statusCode(200).extract().jsonPath();
            assertThat(node.getInt("gpus")).isEqualTo(2);
            assertThat(node.getString("gpuModel")).isEqualTo("L4");
            assertThat(node.getString("source")).isEqualTo("AGENT");
            assertThat(node.getBoolean("simulated")).isTrue();
            // the token it minted speaks for that node only
            String token = Files.readString(dir.resolve("token")).strip();
            given().baseUri(RunningGantry.url("placement-service")).auth().oauth2(token).when().get("/v1/agent/assignments?node=" + NODE)
                    .then().statusCode(403);
            given().baseUri(RunningGantry.url("placement-service")).auth().oauth2(token)
                    .when().get("/v1/agent/assignments?node=cli-agent-node").then().statusCode(200);
            assertThat(java.nio.file.attribute.PosixFilePermissions.toString(Files.getPosixFilePermissions(dir.resolve("token"))))
                    .isEqualTo("rw-------");
        } finally {
            cli.destroy();
            cli.waitFor(20, java.util.concurrent.TimeUnit.SECONDS);
            given().baseUri(RunningGantry.url("node-inventory-service")).auth().oauth2(RunningGantry.adminToken())
                    .when().delete("/v1/nodes/cli-agent-node");
        }
        Process refused = new ProcessBuilder(root.resolve("bin/gantry").toString(), "agent", "--token-file", "/tmp/x").start();
        assertThat(refused.waitFor()).isEqualTo(2);
    }

    @Test
    void aTwoTaskGangRunsAsRealProcessesOnDisjointGpusAndSucceeds() throws Exception {
        String id = submit("agent-ddp", "echo \"rank=$RANK world=$WORLD_SIZE gpus=$CUDA_VISIBLE_DEVICES\"; "
                + "test \"$NVIDIA_VISIBLE_DEVICES\" = \"$CUDA_VISIBLE_DEVICES\" && test -d \"$GANTRY_CHECKPOINT_DIR\" "
                + "&& test \"$GANTRY_JOB_ID\" && test \"$MASTER_ADDR\" = 127.0.0.1");
        assertThat(awaitEnd(id)).as("job %s; agent log:\n%s", id, Files.readString(agentLog)).isEqualTo("SUCCEEDED");

        Map<String, String> logs = logs(id);
        assertThat(logs).containsOnlyKeys("worker-0", "worker-1");
        Set<Integer> ranks = new HashSet<>();
        Set<String> gpus = new HashSet<>();
        for (String log : logs.values()) {
            Matcher m = LINE.matcher(log);
            assertThat(m.find()).as(log).isTrue();
            ranks.add(Integer.parseInt(m.group(1)));
            assertThat(m.group(2)).isEqualTo("2");
            List<String> mine = List.of(m.group(3).split(","));
            assertThat(mine).hasSize(2);
            for (String g : mine) {
                assertThat(Integer.parseInt(g)).isBetween(0, 7);
                assertThat(gpus.add(g)).as("GPU %s given to two tasks", g).isTrue();
            }
        }
        assertThat(ranks).containsExactlyInAnyOrder(0, 1);
        assertThat(gpus).hasSize(4);
    }

    @Test
    void aRestartedAgentTakesOverItsTasksOneEndedWhileNoAgentRanTheOtherRunsOnAndTheJobSucceeds() throws Exception {
        // each rank waits for a file of its own in the job's checkpoint directory, then exits 0
        String id = submit("agent-restart", "echo \"started rank=$RANK\"; while [ ! -f \"$GANTRY_CHECKPOINT_DIR/go-$RANK\" ]; "
                + "do sleep 0.2; done; echo \"finished rank=$RANK\"");
        await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(250)).until(() -> wrappersOf(id).size() == 2);
        Map<String, Long> wrappers = wrappersOf(id);
        Path checkpoints = work.resolve("checkpoints").resolve(id);

        agent.destroyForcibly(); // SIGKILL: no shutdown hook; its tasks (sessions of their own) keep running
        agent.waitFor();
        assertThat(wrappers.values()).allSatisfy(pid -> assertThat(processesOf(id)).contains(pid));
        Files.writeString(checkpoints.resolve("go-1"), ""); // rank 1 ends while no agent watches
        await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(200)).until(() ->
                !processesOf(id).contains(wrappers.get("worker-1")));
        launchAgent("node-agent-restarted");
        await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(250)).until(() ->
                Files.readString(agentLog).contains("re-attached"));
        assertThat(job(id).getString("state")).isIn("PLACED", "RUNNING"); // not ended, not requeued
        Files.writeString(checkpoints.resolve("go-0"), ""); // rank 0 ends under the new agent

        assertThat(awaitEnd(id)).as("job %s; agent log:\n%s", id, Files.readString(agentLog)).isEqualTo("SUCCEEDED");
        assertThat(job(id).getInt("exitCode")).isZero();
        assertThat(job(id).getInt("attempts")).as("not requeued: the same attempt ran to its end").isEqualTo(1);
        try (Stream<Path> dirs = Files.list(work.resolve("jobs").resolve(id))) {
            assertThat(dirs.count()).isEqualTo(1);
        }
        // the whole output reached admission, the part written while no agent ran included
        JsonPath logs = given().baseUri(RunningGantry.url("admission-service")).auth().oauth2(RunningGantry.token("alice", "vision"))
                .when().get("/v1/jobs/" + id + "/logs").then().statusCode(200).extract().jsonPath();
        assertThat(logs.getString("tasks.find { it.task == 'worker-0' }.text")).contains("started rank=0").contains("finished rank=0");
        assertThat(logs.getString("tasks.find { it.task == 'worker-1' }.text")).contains("started rank=1").contains("finished rank=1");
        assertThat(Files.readString(agentLog)).doesNotContain("reporting it lost");
    }

    @Test
    void aTaskThatVanishedWithItsWrapperWhileNoAgentRanIsReportedLostAndTheJobGoesBackInLine() throws Exception {
        String id = submit("agent-lost", "if [ -f \"$GANTRY_CHECKPOINT_DIR/step-$RANK\" ]; then "
                + "echo \"resumed rank=$RANK from step $(cat \"$GANTRY_CHECKPOINT_DIR/step-$RANK\")\"; exit 0; fi; "
                + "echo 41 > \"$GANTRY_CHECKPOINT_DIR/step-$RANK\"; echo \"started rank=$RANK\"; exec sleep 300");
        await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(250)).until(() -> processesOf(id).size() == 4);
        agent.destroyForcibly();
        agent.waitFor();
        for (long pid : processesOf(id)) {
            new ProcessBuilder("kill", "-KILL", String.valueOf(pid)).start().waitFor(); // the host lost them, wrappers and all
        }
        launchAgent("node-agent-after-loss");
        assertThat(awaitEnd(id)).as("job %s; agent log:\n%s", id, Files.readString(agentLog)).isEqualTo("SUCCEEDED");
        List<Path> attempts;
        try (Stream<Path> dirs = Files.list(work.resolve("jobs").resolve(id))) {
            attempts = dirs.sorted().toList();
        }
        assertThat(attempts).hasSize(2);
        assertThat(Files.readString(attempts.get(1).resolve("worker-0.log"))).contains("resumed rank=0 from step 41");
        List<String> reasons = given().baseUri(RunningGantry.url("admission-service")).auth().oauth2(RunningGantry.token("alice", "vision"))
                .when().get("/v1/jobs/" + id + "/history").then().statusCode(200).extract().jsonPath().getList("reason", String.class);
        assertThat(reasons).anySatisfy(r -> assertThat(r).contains("lost on node " + NODE));
    }

    @Test
    void theTasksOutputReachesWhoeverMaySeeTheJobThroughAdmissionAndTheCli() throws Exception {
        String id = submit("agent-logs", "echo \"rank=$RANK hello\"; sleep 3; echo \"rank=$RANK température ok\"");
        // followed while it runs: the CLI prints each task's lines as they come and returns when the job has ended
        CliIT.Result followed = CliIT.gantry("alice", "logs", id, "-f");
        assertThat(followed.exit()).as(followed.err()).isZero();
        assertThat(followed.out()).contains("[worker-0] rank=0 hello").contains("[worker-1] rank=1 hello")
                .contains("[worker-0] rank=0 température ok").contains("[worker-1] rank=1 température ok");
        assertThat(job(id).getString("state")).isEqualTo("SUCCEEDED");

        CliIT.Result one = CliIT.gantry("alice", "logs", id, "--task", "worker-1");
        assertThat(one.exit()).as(one.err()).isZero();
        assertThat(one.out()).isEqualTo("rank=1 hello\nrank=1 température ok\n");
        JsonPath view = given().baseUri(RunningGantry.url("admission-service")).auth().oauth2(RunningGantry.token("carol", "vision"))
                .when().get("/v1/jobs/" + id + "/logs").then().statusCode(200).extract().jsonPath();
        assertThat(view.getList("tasks.task", String.class)).containsExactly("worker-0", "worker-1");
        assertThat(view.getList("tasks.node", String.class)).containsOnly(NODE);
        // someone who may not see the job: 404, from the REST API and the CLI
        given().baseUri(RunningGantry.url("admission-service")).auth().oauth2(RunningGantry.token("mallory", "speech"))
                .when().get("/v1/jobs/" + id + "/logs").then().statusCode(404);
        CliIT.Result refused = CliIT.gantry(Map.of("GANTRY_TEAMS", "speech"), "mallory", "logs", id);
        assertThat(refused.exit()).isEqualTo(1);
        assertThat(refused.err()).contains("404");
    }

    @Test
    void aPreemptedCheckpointingJobGetsSigtermCheckpointsGoesBackInLineAndResumesFromItsCheckpoint() throws Exception {
        Path root = Path.of(System.getProperty("gantry.root", ".."));
        // the example of examples/, in this test's queue, for 40 steps (time for the planner to decide, on a loaded machine)
        var mapper = new com.fasterxml.jackson.databind.ObjectMapper();
        var example = (com.fasterxml.jackson.databind.node.ObjectNode) mapper.readTree(root.resolve("examples/checkpointing.json").toFile());
        example.put("queue", "agent-normal");
        var command = (com.fasterxml.jackson.databind.node.ArrayNode) example.withArray("taskGroups").get(0).withArray("command");
        command.set(command.size() - 1, mapper.getNodeFactory().textNode("40"));
        String alice = RunningGantry.token("alice", "vision");
        var submitted = given().baseUri(RunningGantry.url("admission-service")).auth().oauth2(alice).contentType(ContentType.JSON)
                .body(mapper.writeValueAsString(example)).when().post("/v1/jobs");
        assertThat(submitted.statusCode()).as(submitted.asString()).isEqualTo(201);
        String id = submitted.path("id");
        await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(300)).until(() -> outputOf(id).contains("step 4"));

        // a job that wants the whole node, at a higher priority (the queue lets its members ask for up to 1000): the
        // checkpointing job must make room
        given().baseUri(RunningGantry.url("quota-service")).auth().oauth2(RunningGantry.adminToken()).contentType(ContentType.JSON)
                .body("{\"capability\": {\"gpus\": 64}, \"members\": {\"teams\": [\"vision\"]}, \"limits\": {\"maxPriority\": 1000}}")
                .when().put("/v1/queues/agent-normal").then().statusCode(200);
        String preemptor = given().baseUri(RunningGantry.url("admission-service")).auth().oauth2(alice).contentType(ContentType.JSON)
                .body("""
                        {"name": "agent-preemptor", "queue": "agent-normal", "priority": 1000, "gpuModels": ["A100"],
                         "estimatedRuntimeSeconds": 60,
                         "taskGroups": [{"name": "main", "replicas": 1, "gpusPerReplica": 8, "cpuMillis": 100, "memoryMiB": 64,
                                         "command": ["sh", "-c", "echo preemptor ran; sleep 2"]}]}
                        """).when().post("/v1/jobs").then().statusCode(201).extract().path("id");
        await().atMost(Duration.ofSeconds(120)).pollInterval(Duration.ofMillis(500)).until(() ->
                Set.of("SUCCEEDED", "FAILED", "CANCELLED").contains(job(preemptor).getString("state")));
        assertThat(job(preemptor).getString("state")).isEqualTo("SUCCEEDED");
        await().atMost(Duration.ofSeconds(180)).pollInterval(Duration.ofMillis(500)).until(() ->
                Set.of("SUCCEEDED", "FAILED", "CANCELLED").contains(job(id).getString("state")));
        assertThat(job(id).getString("state")).as("job %s; agent log:\n%s", id, Files.readString(agentLog)).isEqualTo("SUCCEEDED");

        JsonPath logs = given().baseUri(RunningGantry.url("admission-service")).auth().oauth2(alice)
                .when().get("/v1/jobs/" + id + "/logs").then().statusCode(200).extract().jsonPath();
        List<Long> attempts = logs.getList("attempts", Long.class);
        assertThat(attempts).as("attempts (1: the checkpointing job was not preempted; preemptor %s, history %s)",
                job(preemptor).prettify(), given().baseUri(RunningGantry.url("admission-service")).auth().oauth2(alice)
                        .when().get("/v1/jobs/" + preemptor + "/history").asString()).hasSize(2);
        String first = given().baseUri(RunningGantry.url("admission-service")).auth().oauth2(alice)
                .when().get("/v1/jobs/" + id + "/logs?attempt=" + attempts.get(0)).then().statusCode(200).extract().path("tasks[0].text");
        Matcher saved = Pattern.compile("SIGTERM: checkpointed step (\\d+), exiting").matcher(first);
        assertThat(saved.find()).as("the first attempt's output:\n%s", first).isTrue();
        String second = logs.getString("tasks[0].text");
        assertThat(second).as("the second attempt's output").contains("resumed from step " + saved.group(1)).contains("done after 40 steps")
                .doesNotContain("starting at step 0");
        List<String> states = given().baseUri(RunningGantry.url("admission-service")).auth().oauth2(alice)
                .when().get("/v1/jobs/" + id + "/history").then().statusCode(200).extract().jsonPath().getList("state", String.class);
        // a checkpointable victim goes back in line (QUEUED, issue 18 item 3), then runs again; never FAILED
        assertThat(states).containsSubsequence("PLACED", "QUEUED", "PLACED", "SUCCEEDED").doesNotContain("FAILED");
        assertThat(Files.readString(agentLog)).contains("preempted, stopping (grace");
    }

    /** The task wrappers' pids (the process groups) the agent recorded for a job, by task. */
    private static Map<String, Long> wrappersOf(String id) throws IOException {
        Map<String, Long> out = new java.util.TreeMap<>();
        Path tasks = work.resolve("tasks");
        if (!Files.isDirectory(tasks)) {
            return out;
        }
        try (Stream<Path> files = Files.list(tasks)) {
            for (Path f : files.filter(p -> p.getFileName().toString().startsWith(id + "_") && p.toString().endsWith(".json")).toList()) {
                JsonPath state = JsonPath.from(Files.readString(f));
                out.put(state.getString("task"), state.getLong("pid"));
            }
        }
        return out;
    }

    /** What the agent shipped of a job's latest attempt, every task's output together. */
    private static String outputOf(String id) {
        return String.join("\n", given().baseUri(RunningGantry.url("admission-service")).auth().oauth2(RunningGantry.token("alice", "vision"))
                .when().get("/v1/jobs/" + id + "/logs").then().statusCode(200).extract().jsonPath().getList("tasks.text", String.class));
    }

    @Test
    void aTaskExitingThreeFailsTheJobWithThatCodeAndItsSiblingIsStopped() throws Exception {
        String id = submit("agent-fails", "if [ \"$RANK\" = 1 ]; then sleep 2; echo 'cannot open dataset'; exit 3; "
                + "else echo waiting; exec sleep 300; fi");
        assertThat(awaitEnd(id)).as("job %s; agent log:\n%s", id, Files.readString(agentLog)).isEqualTo("FAILED");
        String reason = job(id).getString("pendingReason");
        assertThat(reason).contains("exited with code 3").contains("cannot open dataset");
        // rank 0 would sleep 300 s: its agent stops it (SIGTERM to its group) once the job has failed
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(250)).until(() -> processesOf(id).isEmpty());
        assertThat(Files.readString(agentLog)).contains("no longer assigned");
    }
}
