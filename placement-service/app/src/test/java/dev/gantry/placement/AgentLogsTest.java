package dev.gantry.placement;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.hamcrest.Matchers.containsString;
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
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.Test;

/**
 * Task output shipped by node agents ({@code POST /v1/agent/logs}) and read back by admission
 * ({@code GET /v1/task-logs/{job}}): in order, once, from the node the task runs on only, bounded,
 * and cut where UTF-8 characters end.
 */
@QuarkusTest
class AgentLogsTest {

    private static final String MODEL = "AGENT-LOG-GPU";

    @ConfigProperty(name = "gantry.nats.url")
    String natsUrl;

    @Inject
    TestDatabase db;

    private final List<UUID> placed = new java.util.ArrayList<>();

    /** Each test's job ends with it: a job left running would hold its queue's share for the next test class. */
    @org.junit.jupiter.api.AfterEach
    void cancelAll() throws Exception {
        try (TestNats nats = TestNats.connect(natsUrl)) {
            for (UUID id : placed) {
                nats.publish(EventEnvelope.of(Subjects.JOBS_CANCELLED, id.toString(),
                        new dev.gantry.contracts.jobs.JobCancelled(id, "agent-log-test", "bob", Instant.now())));
            }
        }
        await().atMost(Duration.ofSeconds(20)).until(() -> placed.stream().allMatch(id ->
                db.queryLong("select count(*) from running_job where job_id = ?::uuid", id.toString()) == 0));
        placed.clear();
    }

    record Placed(UUID jobId, long attempt, String task, String node, String otherNode) {
    }

    private static NodeInfo node(String name, String tag) {
        return new NodeInfo(name, MODEL, 8, List.of(List.of(0, 1, 2, 3, 4, 5, 6, 7)), List.of(), false, 64_000, 512_000,
                new NodeInfo.Topology("z1", "s1", "leaf-" + tag), null, Map.of(),
                List.of(new NodeInfo.Taint("gantry.dev/test", tag, "NoSchedule")), true, NodeInfo.Health.READY, 81_920, null, 0, false,
                Instant.now(), "AGENT", true);
    }

    /** A one-task job placed on {@code <tag>-a}; {@code <tag>-b} is another agent's node. */
    private Placed place(String tag) throws Exception {
        UUID jobId = UUID.randomUUID();
        placed.add(jobId);
        String a = tag + "-a";
        String b = tag + "-b";
        JobQueued job = new JobQueued(jobId, "log-" + tag, "agent-log-test", "bob", 100, Instant.now(), null,
                List.of(new JobQueued.TaskGroup("main", 1, 8, null, 1000, 1000, null, List.of("true"))),
                List.of(MODEL), null, null, false, Map.of(),
                List.of(new JobQueued.Toleration("gantry.dev/test", tag)), true, false, 1L, null);
        try (TestNats nats = TestNats.connect(natsUrl)) {
            NodeInfo na = node(a, tag);
            NodeInfo nb = node(b, tag);
            nats.publish(EventEnvelope.of(Subjects.NODES_UPSERTED, a, new NodeChanged(System.nanoTime(), na)));
            nats.publish(EventEnvelope.of(Subjects.NODES_UPSERTED, b, new NodeChanged(System.nanoTime(), nb)));
            await().atMost(Duration.ofSeconds(20)).until(() ->
                    db.queryLong("select count(*) from node where name in (?, ?) and source = 'AGENT'", a, b) == 2);
            nats.publish(EventEnvelope.of(Subjects.JOBS_QUEUED, jobId.toString(), job));
        }
        await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(100)).until(() ->
                db.queryLong("select count(*) from allocation where job_id = ?::uuid", jobId.toString()) == 1);
        String on = db.queryString("select node from allocation where job_id = ?::uuid", jobId.toString());
        JsonPath view = given().auth().oauth2(TestTokens.agent(on)).when().get("/v1/agent/assignments?node=" + on)
                .then().statusCode(200).extract().jsonPath();
        long attempt = view.getLong("assignments[0].attempt");
        return new Placed(jobId, attempt, view.getString("assignments[0].task"), on, on.equals(a) ? b : a);
    }

    private static Response ship(String asNode, Placed p, long offset, byte[] data) {
        return given().auth().oauth2(TestTokens.agent(asNode)).contentType(ContentType.JSON)
                .body(Map.of("jobId", p.jobId().toString(), "attempt", p.attempt(), "task", p.task(), "offset", offset,
                        "data", Base64.getEncoder().encodeToString(data)))
                .when().post("/v1/agent/logs");
    }

    private static JsonPath read(Placed p, String query) {
        return given().auth().oauth2(TestTokens.service()).when().get("/v1/task-logs/" + p.jobId() + query)
                .then().statusCode(200).extract().jsonPath();
    }

    @Test
    void chunksAreTakenInOrderOnceAndReadBackFromAnyOffset() throws Exception {
        Placed p = place("logs1");
        byte[] first = "step 1\nstep 2\n".getBytes(StandardCharsets.UTF_8);
        byte[] second = "step 3\n".getBytes(StandardCharsets.UTF_8);
        ship(p.node(), p, 0, first).then().statusCode(200).body("accepted", equalTo(true)).body("next", equalTo(first.length));
        // the same chunk again (a retry whose answer was lost): nothing changes, the answer says where to go on
        ship(p.node(), p, 0, first).then().statusCode(200).body("accepted", equalTo(false)).body("next", equalTo(first.length));
        // a gap is refused the same way
        ship(p.node(), p, first.length + 5, second).then().statusCode(200).body("accepted", equalTo(false))
                .body("next", equalTo(first.length));
        ship(p.node(), p, first.length, second).then().statusCode(200).body("accepted", equalTo(true));

        JsonPath all = read(p, "");
        assertThat(all.getLong("attempt")).isEqualTo(p.attempt());
        assertThat(all.getString("tasks[0].task")).isEqualTo(p.task());
        assertThat(all.getString("tasks[0].node")).isEqualTo(p.node());
        assertThat(all.getString("tasks[0].text")).isEqualTo("step 1\nstep 2\nstep 3\n");
        assertThat(all.getLong("tasks[0].next")).isEqualTo(first.length + second.length);
        JsonPath later = read(p, "?task=" + p.task() + "&offset=7&limit=7");
        assertThat(later.getString("tasks[0].text")).isEqualTo("step 2\n");
        assertThat(later.getLong("tasks[0].next")).isEqualTo(14);
        assertThat(read(p, "?task=" + p.task() + "&offset=21").getString("tasks[0].text")).isEmpty();
    }

    @Test
    void aReadNeverEndsInsideACharacter() throws Exception {
        Placed p = place("logs2");
        byte[] text = "température\n".getBytes(StandardCharsets.UTF_8); // é is two bytes, at 4 and 5
        ship(p.node(), p, 0, java.util.Arrays.copyOf(text, 5)).then().statusCode(200).body("accepted", equalTo(true));
        JsonPath half = read(p, "");
        assertThat(half.getString("tasks[0].text")).isEqualTo("temp");
        assertThat(half.getLong("tasks[0].next")).isEqualTo(4);
        ship(p.node(), p, 5, java.util.Arrays.copyOfRange(text, 5, text.length)).then().statusCode(200);
        assertThat(read(p, "?task=" + p.task() + "&offset=4").getString("tasks[0].text")).isEqualTo("érature\n");
    }

    @Test
    void onlyTheAgentOfTheTasksNodeMayShipItsOutputAndOnlyServicesAndAdminsMayReadIt() throws Exception {
        Placed p = place("logs3");
        ship(p.otherNode(), p, 0, "forged\n".getBytes(StandardCharsets.UTF_8)).then().statusCode(403);
        given().auth().oauth2(TestTokens.user("bob", "vision")).contentType(ContentType.JSON)
                .body(Map.of("jobId", p.jobId().toString(), "attempt", p.attempt(), "task", p.task(), "offset", 0, "data", "eA=="))
                .when().post("/v1/agent/logs").then().statusCode(403);
        assertThat(read(p, "").getList("tasks")).isEmpty();
        given().auth().oauth2(TestTokens.user("bob", "vision")).when().get("/v1/task-logs/" + p.jobId()).then().statusCode(403);
        given().auth().oauth2(TestTokens.agent(p.node())).when().get("/v1/task-logs/" + p.jobId()).then().statusCode(403);
        given().when().get("/v1/task-logs/" + p.jobId()).then().statusCode(401);
        given().auth().oauth2(TestTokens.admin()).when().get("/v1/task-logs/" + p.jobId()).then().statusCode(200);
        // a task that is not the job's
        given().auth().oauth2(TestTokens.agent(p.node())).contentType(ContentType.JSON)
                .body(Map.of("jobId", p.jobId().toString(), "attempt", p.attempt(), "task", "nope-0", "offset", 0, "data", "eA=="))
                .when().post("/v1/agent/logs").then().statusCode(422).contentType(startsWith("application/problem+json"));
    }

    @Test
    void badChunksAreRefusedWithProblemJsonNamingTheField() throws Exception {
        Placed p = place("logs4");
        given().auth().oauth2(TestTokens.agent(p.node())).contentType(ContentType.JSON)
                .body(Map.of("jobId", p.jobId().toString(), "attempt", p.attempt(), "task", p.task(), "offset", 0, "data", "not base64!"))
                .when().post("/v1/agent/logs").then().statusCode(400).contentType(startsWith("application/problem+json"))
                .body(containsString("data"));
        given().auth().oauth2(TestTokens.agent(p.node())).contentType(ContentType.JSON)
                .body(Map.of("jobId", p.jobId().toString(), "attempt", p.attempt(), "task", p.task(), "offset", -1, "data", "eA=="))
                .when().post("/v1/agent/logs").then().statusCode(400).body(containsString("offset"));
        // 40 KiB decoded: more than a chunk may carry (its JSON still under the 64 KiB body limit)
        ship(p.node(), p, 0, new byte[40 * 1024]).then().statusCode(400).body(containsString("data"));
        ship(p.node(), p, 0, new byte[60 * 1024]).then().statusCode(413);
        given().auth().oauth2(TestTokens.service()).when().get("/v1/task-logs/" + p.jobId() + "?limit=0").then().statusCode(400)
                .body(containsString("limit"));
    }

    @Test
    void aTaskKeepsOnlyItsNewestBytesUnderTheBound() throws Exception {
        Placed p = place("logs5");
        byte[] kib = new byte[1024];
        java.util.Arrays.fill(kib, (byte) 'x');
        long offset = 0;
        for (int i = 0; i < 12; i++) { // 12 KiB through a 8 KiB bound (the test profile's)
            ship(p.node(), p, offset, kib).then().statusCode(200).body("accepted", equalTo(true));
            offset += kib.length;
        }
        JsonPath log = read(p, "?limit=65536");
        assertThat(log.getLong("tasks[0].end")).isEqualTo(12 * 1024);
        assertThat(log.getLong("tasks[0].dropped")).isEqualTo(4 * 1024);
        assertThat(log.getLong("tasks[0].from")).isEqualTo(4 * 1024);
        assertThat(log.getString("tasks[0].text")).hasSize(8 * 1024);
        assertThat(db.queryLong("select coalesce(sum(end_offset - start_offset), 0) from agent_log_chunk where job_id = ?::uuid",
                p.jobId().toString())).isEqualTo(8 * 1024);
    }
}
