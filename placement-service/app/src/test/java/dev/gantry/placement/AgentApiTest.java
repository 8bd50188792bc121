package dev.gantry.placement;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.startsWith;

import dev.gantry.contracts.events.EventEnvelope;
import dev.gantry.contracts.events.Subjects;
import dev.gantry.contracts.jobs.JobQueued;
import dev.gantry.contracts.nodes.NodeChanged;
import dev.gantry.contracts.nodes.NodeInfo;
import dev.gantry.testing.TestDatabase;
import dev.gantry.testing.TestNats;
import dev.gantry.testing.TestTokens;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import io.restassured.path.json.JsonPath;
import io.restassured.response.Response;
import jakarta.inject.Inject;
import java.time.Duration;
import java.time.Instant;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.Test;

/**
 * Placement's side of the node agents (issue 21): a gang placed on two agent-managed nodes is handed
 * to their agents ({@code GET /v1/agent/assignments}), not "run" by the simulated executor, and ends
 * by the agents' reports ({@code POST /v1/agent/reports}): every task exiting 0 completes it, one
 * exiting non-zero fails it, a lost task requeues it. Each test has nodes and a taint of its own, so
 * no other job lands on them.
 */
@QuarkusTest
class AgentApiTest {

    private static final String MODEL = "AGENT-TEST-GPU";

    @ConfigProperty(name = "gantry.nats.url")
    String natsUrl;

    @Inject
    TestDatabase db;

    /** A gang of two 8-GPU tasks bound across the two nodes {@code <tag>-a} and {@code <tag>-b}. */
    record Gang(UUID jobId, String nodeA, String nodeB) {
    }

    private static NodeInfo node(String name, String tag) {
        return node(name, tag, NodeInfo.Health.READY);
    }

    private static NodeInfo node(String name, String tag, NodeInfo.Health health) {
        return new NodeInfo(name, MODEL, 8, List.of(List.of(0, 1, 2, 3, 4, 5, 6, 7)), List.of(), false, 64_000, 512_000,
                new NodeInfo.Topology("z1", "s1", "leaf-" + tag), null, Map.of("gantry.dev/address", "10.1.0." + (name.endsWith("a") ? 1 : 2)),
                List.of(new NodeInfo.Taint("gantry.dev/test", tag, "NoSchedule")), true, health, 81_920, null, 0, false,
                Instant.now(), "AGENT", true);
    }

    private Gang placeGang(String tag) throws Exception {
        UUID jobId = UUID.randomUUID();
        String a = tag + "-a";
        String b = tag + "-b";
        // 1 s estimated: the simulated executor would complete it at once; agent nodes wait for their agents
        JobQueued job = new JobQueued(jobId, "agent-" + tag, "agent-test", "bob", 100, Instant.now(), null,
                List.of(new JobQueued.TaskGroup("worker", 2, 8, null, 1000, 1000, null,
                        List.of("sh", "-c", "echo rank=$RANK world=$WORLD_SIZE gpus=$CUDA_VISIBLE_DEVICES"))),
                List.of(MODEL), null, null, false, Map.of(), List.of(new JobQueued.Toleration("gantry.dev/test", tag)), true, false, 1L, 45);
        try (TestNats nats = TestNats.connect(natsUrl)) {
            nats.publish(EventEnvelope.of(Subjects.NODES_UPSERTED, a, new NodeChanged(System.nanoTime(), node(a, tag))));
            nats.publish(EventEnvelope.of(Subjects.NODES_UPSERTED, b, new NodeChanged(System.nanoTime(), node(b, tag))));
            await().atMost(Duration.ofSeconds(20)).until(() ->
                    db.queryLong("select count(*) from node where name in (?, ?) and source = 'AGENT'", a, b) == 2);
            nats.publish(EventEnvelope.of(Subjects.JOBS_QUEUED, jobId.toString(), job));
        }
        await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(100)).until(() ->
                db.queryLong("select count(*) from allocation where job_id = ?::uuid", jobId.toString()) == 2);
        return new Gang(jobId, a, b);
    }

    private static JsonPath assignments(String node) {
        return given().auth().oauth2(TestTokens.agent(node)).when().get("/v1/agent/assignments?node=" + node)
                .then().statusCode(200).extract().jsonPath();
    }

    private static Response report(String node, Object body) {
        return given().auth().oauth2(TestTokens.agent(node)).contentType(ContentType.JSON).body(body).when().post("/v1/agent/reports");
    }

    private static Map<String, Object> report(UUID jobId, long attempt, String task, String state, Integer exitCode, String tail) {
        Map<String, Object> r = new java.util.LinkedHashMap<>();
        r.put("jobId", jobId.toString());
        r.put("attempt", attempt);
        r.put("task", task);
        r.put("state", state);
        if (exitCode != null) {
            r.put("exitCode", exitCode);
        }
        if (tail != null) {
            r.put("logTail", tail);
        }
        return r;
    }

    private long outbox(String subject, UUID jobId) {
        return db.queryLong("select count(*) from outbox_event where subject = ? and subject_id = ?", subject, jobId.toString());
    }

    private String taskOn(Gang gang, String node) {
        return db.queryString("select task from allocation where job_id = ?::uuid and node = ?", gang.jobId().toString(), node);
    }

    @Test
    void eachAgentGetsItsTasksWithTheirGpusRanksAndCommandAndTheSimulatedExecutorLeavesThemAlone() throws Exception {
        Gang gang = placeGang("asg");
        Set<Integer> ranks = new HashSet<>();
        for (String node : List.of(gang.nodeA(), gang.nodeB())) {
            JsonPath view = assignments(node);
            assertThat(view.getList("assignments")).hasSize(1);
            String task = taskOn(gang, node);
            String gpus = db.queryString("select array_to_string(gpu_indices, ',') from allocation where job_id = ?::uuid and node = ?",
                    gang.jobId().toString(), node);
            assertThat(view.getString("assignments[0].jobId")).isEqualTo(gang.jobId().toString());
            assertThat(view.getString("assignments[0].task")).isEqualTo(task);
            assertThat(String.join(",", view.getList("assignments[0].gpus", Integer.class).stream().map(String::valueOf).toList()))
                    .isEqualTo(gpus);
            assertThat(view.getList("assignments[0].command", String.class)).containsExactly("sh", "-c",
                    "echo rank=$RANK world=$WORLD_SIZE gpus=$CUDA_VISIBLE_DEVICES");
            assertThat(view.getInt("assignments[0].worldSize")).isEqualTo(2);
            assertThat(view.getInt("assignments[0].nodes")).isEqualTo(2);
            int rank = view.getInt("assignments[0].rank");
            ranks.add(rank);
            assertThat(view.getInt("assignments[0].nodeRank")).isEqualTo(rank); // one task per node
            assertThat(view.getInt("assignments[0].localRank")).isZero();
            // rank 0's node, at the address its agent registered
            String rank0Node = db.queryString("select node from allocation where job_id = ?::uuid and task = 'worker-0'", gang.jobId().toString());
            assertThat(view.getString("assignments[0].masterAddr")).isEqualTo(rank0Node.endsWith("a") ? "10.1.0.1" : "10.1.0.2");
            assertThat(view.getLong("assignments[0].attempt")).isPositive();
            assertThat(view.getBoolean("assignments[0].stop")).isFalse();
            assertThat(view.getInt("assignments[0].checkpointGraceSeconds")).as("the job's own grace, for its agent").isEqualTo(45);
            assertThat(view.getString("assignments[0].reported")).isNull();
        }
        assertThat(ranks).containsExactlyInAnyOrder(0, 1);
        Thread.sleep(2500); // its due time (1 s x 0.01) is long past and the sweep runs every second
        assertThat(db.queryLong("select count(*) from running_job where job_id = ?::uuid", gang.jobId().toString())).isEqualTo(1);
        assertThat(outbox(Subjects.PLACEMENTS_COMPLETED, gang.jobId())).isZero();
    }

    @Test
    void aTaskOnMigDevicesIsAssignedTheirUuidsAndNoGpuIndex() throws Exception {
        String name = "mig-agent-a";
        NodeInfo plain = node(name, "mig");
        List<NodeInfo.MigDevice> devices = List.of(new NodeInfo.MigDevice("MIG-5c9a2b3e-8f1d-5a7e-9b3c-2d4e6f8a1b2c", 7, "3g.40gb", null),
                new NodeInfo.MigDevice("MIG-0a1b2c3d-4e5f-5a6b-8c7d-9e0f1a2b3c4d", 7, "3g.40gb", null));
        NodeInfo withMig = new NodeInfo(plain.name(), plain.gpuModel(), plain.gpus(), plain.nvlinkIslands(), plain.numaNodes(), false,
                plain.cpuMillis(), plain.memoryMiB(), plain.topology(), null, plain.labels(), plain.taints(), true, NodeInfo.Health.READY,
                81_920, new NodeInfo.Mig("mixed", Map.of("3g.40gb", 2), devices), 0, false, Instant.now(), "AGENT", false);
        UUID jobId = UUID.randomUUID();
        JobQueued job = new JobQueued(jobId, "agent-mig", "agent-test", "bob", 100, Instant.now(), null,
                List.of(new JobQueued.TaskGroup("infer", 1, 1, null, 1000, 1000, null, List.of("sh", "-c", "nvidia-smi -L"), null, null,
                        "3g.40gb")),
                List.of(MODEL), null, null, false, Map.of(), List.of(new JobQueued.Toleration("gantry.dev/test", "mig")), true, false, 1L, 45);
        try (TestNats nats = TestNats.connect(natsUrl)) {
            nats.publish(EventEnvelope.of(Subjects.NODES_UPSERTED, name, new NodeChanged(System.nanoTime(), withMig)));
            await().atMost(Duration.ofSeconds(20)).until(() -> db.queryLong("select count(*) from node where name = ? and source = 'AGENT'", name) == 1);
            nats.publish(EventEnvelope.of(Subjects.JOBS_QUEUED, jobId.toString(), job));
        }
        await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(100)).until(() ->
                db.queryLong("select count(*) from allocation where job_id = ?::uuid", jobId.toString()) == 1);
        JsonPath view = assignments(name);
        assertThat(view.getList("assignments")).hasSize(1);
        assertThat(view.getList("assignments[0].gpus")).isEmpty();
        assertThat(view.getList("assignments[0].migDevices", String.class)).singleElement().asString().startsWith("MIG-").isIn(
                devices.stream().map(NodeInfo.MigDevice::id).toList());
        assertThat(view.getList("assignments[0].migDevices", String.class))
                .isEqualTo(List.of(db.queryString("select array_to_string(mig_devices, ',') from allocation where job_id = ?::uuid",
                        jobId.toString())));
        report(name, report(jobId, view.getLong("assignments[0].attempt"), "infer-0", "EXITED", 0, "ok")).then().statusCode(200)
                .body("applied", equalTo(true));
        await().atMost(Duration.ofSeconds(20)).until(() -> outbox(Subjects.PLACEMENTS_COMPLETED, jobId) == 1);
    }

    @Test
    void anAgentMaySpeakForItsOwnNodeOnly() throws Exception {
        Gang gang = placeGang("authz");
        long attempt = assignments(gang.nodeA()).getLong("assignments[0].attempt");
        given().when().get("/v1/agent/assignments?node=" + gang.nodeA()).then().statusCode(401)
                .contentType(startsWith("application/problem+json"));
        given().auth().oauth2(TestTokens.agent(gang.nodeB())).when().get("/v1/agent/assignments?node=" + gang.nodeA())
                .then().statusCode(403).contentType(startsWith("application/problem+json")).body("status", equalTo(403));
        given().auth().oauth2(TestTokens.user("alice", "vision")).when().get("/v1/agent/assignments?node=" + gang.nodeA())
                .then().statusCode(403);
        given().auth().oauth2(TestTokens.service()).when().get("/v1/agent/assignments?node=" + gang.nodeA()).then().statusCode(403);
        given().auth().oauth2(TestTokens.admin()).when().get("/v1/agent/assignments?node=" + gang.nodeA()).then().statusCode(200);

        // node B's agent reporting node A's task: refused, nothing stored
        Map<String, Object> forged = report(gang.jobId(), attempt, taskOn(gang, gang.nodeA()), "EXITED", 1, "forged");
        report(gang.nodeB(), forged).then().statusCode(403).contentType(startsWith("application/problem+json"));
        given().contentType(ContentType.JSON).body(forged).when().post("/v1/agent/reports").then().statusCode(401)
                .contentType(startsWith("application/problem+json"));
        given().auth().oauth2(TestTokens.user("alice", "vision")).contentType(ContentType.JSON).body(forged).when()
                .post("/v1/agent/reports").then().statusCode(403);
        assertThat(db.queryLong("select count(*) from agent_task where job_id = ?::uuid", gang.jobId().toString())).isZero();
        assertThat(db.queryLong("select count(*) from running_job where job_id = ?::uuid", gang.jobId().toString())).isEqualTo(1);
        assertThat(outbox(Subjects.PLACEMENTS_FAILED, gang.jobId())).isZero();
    }

    @Test
    void badReportsAreRefusedWithProblemJson() throws Exception {
        Gang gang = placeGang("bad");
        String node = gang.nodeA();
        String task = taskOn(gang, node);
        long attempt = assignments(node).getLong("assignments[0].attempt");
        Object[][] cases = {
                {report(gang.jobId(), attempt, task, "DONE", null, null), 400},
                {report(gang.jobId(), attempt, task, "EXITED", null, null), 400}, // no exit code
                {report(gang.jobId(), attempt, task, "STARTED", 0, null), 400}, // an exit code without an exit
                {report(gang.jobId(), attempt, task, "EXITED", 300, null), 400},
                {report(gang.jobId(), attempt, "../etc", "STARTED", null, null), 400},
                {report(gang.jobId(), attempt, task, "EXITED", 1, "x".repeat(16 * 1024 + 1)), 400},
                {report(gang.jobId(), attempt, "worker-7", "STARTED", null, null), 422}, // no such task
                {"{\"jobId\": \"not-a-uuid\", \"attempt\": 1, \"task\": \"w\", \"state\": \"STARTED\"}", 400},
                {"{\"jobId\": ", 400},
        };
        for (Object[] c : cases) {
            int status = (int) c[1];
            report(node, c[0]).then().statusCode(status).contentType(startsWith("application/problem+json")).body("status", equalTo(status));
        }
        // a body past 64 KiB is refused before it is read
        report(node, report(gang.jobId(), attempt, task, "EXITED", 1, "y".repeat(70 * 1024))).then().statusCode(413)
                .contentType(startsWith("application/problem+json")).body("status", equalTo(413));
        given().auth().oauth2(TestTokens.agent(node)).when().get("/v1/agent/assignments?node=" + node + "&wait=90s").then().statusCode(400)
                .contentType(startsWith("application/problem+json"));
        given().auth().oauth2(TestTokens.agent(node)).when().get("/v1/agent/assignments").then().statusCode(400);
        assertThat(db.queryLong("select count(*) from agent_task where job_id = ?::uuid", gang.jobId().toString())).isZero();
        assertThat(db.queryLong("select count(*) from running_job where job_id = ?::uuid", gang.jobId().toString())).isEqualTo(1);
    }

    @Test
    void everyTaskExitingZeroCompletesTheJobOnceAndRepeatedReportsChangeNothing() throws Exception {
        Gang gang = placeGang("ok");
        String taskA = taskOn(gang, gang.nodeA());
        String taskB = taskOn(gang, gang.nodeB());
        long attempt = assignments(gang.nodeA()).getLong("assignments[0].attempt");

        report(gang.nodeA(), report(gang.jobId(), attempt, taskA, "STARTED", null, null)).then().statusCode(200).body("applied", equalTo(true));
        report(gang.nodeA(), report(gang.jobId(), attempt, taskA, "STARTED", null, null)).then().statusCode(200).body("applied", equalTo(false));
        assertThat(assignments(gang.nodeA()).getString("assignments[0].reported")).isEqualTo("RUNNING");

        report(gang.nodeA(), report(gang.jobId(), attempt, taskA, "EXITED", 0, "done")).then().statusCode(200).body("applied", equalTo(true));
        report(gang.nodeA(), report(gang.jobId(), attempt, taskA, "EXITED", 0, "done")).then().statusCode(200).body("applied", equalTo(false));
        assertThat(db.queryLong("select count(*) from running_job where job_id = ?::uuid", gang.jobId().toString())).isEqualTo(1);
        assertThat(outbox(Subjects.PLACEMENTS_COMPLETED, gang.jobId())).isZero(); // B still runs

        report(gang.nodeB(), report(gang.jobId(), attempt, taskB, "EXITED", 0, "done")).then().statusCode(200)
                .body("applied", equalTo(true)).body("outcome", equalTo("job completed"));
        assertThat(outbox(Subjects.PLACEMENTS_COMPLETED, gang.jobId())).isEqualTo(1);
        assertThat(db.queryString("select envelope from outbox_event where subject = ? and subject_id = ?", Subjects.PLACEMENTS_COMPLETED,
                gang.jobId().toString())).as("every task exited 0").contains("\"exitCode\":0");
        assertThat(db.queryLong("select count(*) from allocation where job_id = ?::uuid", gang.jobId().toString())).isZero();
        assertThat(assignments(gang.nodeA()).getList("assignments")).isEmpty();

        // the same exit delivered again (an agent retrying after a lost answer): nothing more happens
        report(gang.nodeB(), report(gang.jobId(), attempt, taskB, "EXITED", 0, "done")).then().statusCode(200).body("applied", equalTo(false));
        report(gang.nodeB(), report(gang.jobId(), attempt, taskB, "EXITED", 3, "late")).then().statusCode(200).body("applied", equalTo(false));
        assertThat(outbox(Subjects.PLACEMENTS_COMPLETED, gang.jobId())).isEqualTo(1);
        assertThat(outbox(Subjects.PLACEMENTS_FAILED, gang.jobId())).isZero();
    }

    @Test
    void aTaskExitingNonZeroFailsTheGangWithItsCodeAndLogTailAndItsSiblingIsNoLongerAssigned() throws Exception {
        Gang gang = placeGang("fail");
        String taskA = taskOn(gang, gang.nodeA());
        long attempt = assignments(gang.nodeA()).getLong("assignments[0].attempt");
        assertThat(assignments(gang.nodeB()).getList("assignments")).hasSize(1);

        report(gang.nodeA(), report(gang.jobId(), attempt, taskA, "EXITED", 3, "loading data\nTraceback: boom")).then().statusCode(200)
                .body("outcome", equalTo("job failed"));
        assertThat(outbox(Subjects.PLACEMENTS_FAILED, gang.jobId())).isEqualTo(1);
        String event = db.queryString("select envelope from outbox_event where subject = ? and subject_id = ?", Subjects.PLACEMENTS_FAILED,
                gang.jobId().toString());
        assertThat(event).contains("exited with code 3").contains("Traceback: boom").contains(taskA).contains("\"exitCode\":3");
        assertThat(assignments(gang.nodeB()).getList("assignments")).as("the sibling's agent stops it").isEmpty();
        assertThat(db.queryLong("select count(*) from pending_job where job_id = ?::uuid", gang.jobId().toString())).isZero();
        assertThat(db.queryLong("select count(*) from ended_job where job_id = ?::uuid", gang.jobId().toString())).isEqualTo(1);
    }

    @Test
    void aLostTaskSendsTheJobBackInLine() throws Exception {
        Gang gang = placeGang("lost");
        String taskA = taskOn(gang, gang.nodeA());
        long attempt = assignments(gang.nodeA()).getLong("assignments[0].attempt");
        report(gang.nodeA(), report(gang.jobId(), attempt, taskA, "STARTED", null, null)).then().statusCode(200);
        report(gang.nodeA(), report(gang.jobId(), attempt, taskA, "LOST", null, null)).then().statusCode(200)
                .body("outcome", equalTo("job requeued"));
        assertThat(outbox(Subjects.PLACEMENTS_REQUEUED, gang.jobId())).isEqualTo(1);
        assertThat(outbox(Subjects.PLACEMENTS_FAILED, gang.jobId())).isZero();
        // back in line, and placed again by a later window as a new attempt
        await().atMost(Duration.ofSeconds(20)).until(() -> {
            JsonPath view = assignments(gang.nodeA());
            return view.getList("assignments").size() == 1 && view.getLong("assignments[0].attempt") != attempt;
        });
        report(gang.nodeA(), report(gang.jobId(), attempt, taskA, "LOST", null, null)).then().statusCode(200).body("applied", equalTo(false));
        assertThat(outbox(Subjects.PLACEMENTS_REQUEUED, gang.jobId())).isEqualTo(1);
    }

    @Test
    void aNodeWhoseAgentStoppedHeartbeatingLosesItsJobsToTheLineNotToFailure() throws Exception {
        Gang gang = placeGang("hb");
        Thread.sleep(4000); // longer than lost-after (3 s in tests) while READY: nothing happens
        assertThat(db.queryLong("select count(*) from running_job where job_id = ?::uuid", gang.jobId().toString())).isEqualTo(1);
        try (TestNats nats = TestNats.connect(natsUrl)) {
            // the inventory's heartbeat timeout turned it NOT_READY
            nats.publish(EventEnvelope.of(Subjects.NODES_UPSERTED, gang.nodeA(),
                    new NodeChanged(System.nanoTime(), node(gang.nodeA(), "hb", NodeInfo.Health.NOT_READY))));
        }
        long notReadyAt = System.nanoTime();
        await().atMost(Duration.ofSeconds(20)).until(() -> outbox(Subjects.PLACEMENTS_REQUEUED, gang.jobId()) == 1);
        assertThat(Duration.ofNanos(System.nanoTime() - notReadyAt)).as("not before lost-after").isGreaterThan(Duration.ofMillis(2500));
        assertThat(db.queryString("select envelope from outbox_event where subject = ? and subject_id = ?", Subjects.PLACEMENTS_REQUEUED,
                gang.jobId().toString())).contains("not ready for more than 3 s");
        assertThat(db.queryLong("select count(*) from pending_job where job_id = ?::uuid", gang.jobId().toString())).isEqualTo(1);
        assertThat(outbox(Subjects.PLACEMENTS_FAILED, gang.jobId())).isZero();
        assertThat(assignments(gang.nodeB()).getList("assignments")).as("node B's agent stops its task").isEmpty();
        Thread.sleep(2000); // the next sweeps find nothing more to do
        assertThat(outbox(Subjects.PLACEMENTS_REQUEUED, gang.jobId())).isEqualTo(1);
    }

    @Test
    void aLongPollAnswersWhenTheAssignmentsChangeOrTheWaitIsOver() throws Exception {
        Gang gang = placeGang("poll");
        String node = gang.nodeA();
        JsonPath first = assignments(node);
        String version = first.getString("version");
        long attempt = first.getLong("assignments[0].attempt");

        long started = System.nanoTime();
        JsonPath same = given().auth().oauth2(TestTokens.agent(node)).when()
                .get("/v1/agent/assignments?node=" + node + "&wait=2s&known=" + version).then().statusCode(200).extract().jsonPath();
        assertThat(Duration.ofNanos(System.nanoTime() - started)).isGreaterThanOrEqualTo(Duration.ofMillis(1900));
        assertThat(same.getString("version")).isEqualTo(version);

        started = System.nanoTime();
        CompletableFuture<JsonPath> held = CompletableFuture.supplyAsync(() -> given().auth().oauth2(TestTokens.agent(node)).when()
                .get("/v1/agent/assignments?node=" + node + "&wait=30s&known=" + version).then().statusCode(200).extract().jsonPath());
        Thread.sleep(500);
        report(node, report(gang.jobId(), attempt, taskOn(gang, node), "STARTED", null, null)).then().statusCode(200);
        JsonPath changed = held.get(20, java.util.concurrent.TimeUnit.SECONDS);
        assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(10));
        assertThat(changed.getString("version")).isNotEqualTo(version);
        assertThat(changed.getString("assignments[0].reported")).isEqualTo("RUNNING");
    }
}
