package dev.gantry.placement;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.gantry.contracts.events.EventCodec;
import dev.gantry.contracts.events.EventEnvelope;
import dev.gantry.contracts.events.Subjects;
import dev.gantry.contracts.jobs.JobCancelled;
import dev.gantry.contracts.jobs.JobQueued;
import dev.gantry.contracts.nodes.NodeChanged;
import dev.gantry.contracts.nodes.NodeInfo;
import dev.gantry.testing.TestDatabase;
import dev.gantry.testing.TestNats;
import dev.gantry.testing.TestTokens;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import io.restassured.path.json.JsonPath;
import jakarta.inject.Inject;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A move of jobs that node agents run (issue 23): the agents are told to stop the moving tasks with
 * the job's checkpoint grace; once a moving job's tasks have all exited (checkpointed), the move is
 * finished at once, not at the end of the grace, and not turned into a requeue: the job holds its
 * new GPUs as a new attempt that the target node's agent is assigned, and the waiting 8-GPU job is
 * bound on the node the moves emptied. The agents are played through the REST API here; e2e's
 * NodeAgentMigrationIT runs real ones.
 */
@QuarkusTest
class AgentMigrationTest {

    private static final String MODEL = "AGENT-MIGRATE-GPU";
    private static final NodeInfo.Taint TAINT = new NodeInfo.Taint("gantry.dev/test", "agent-migration", "NoSchedule");
    private static final List<String> NODES = List.of("agent-mig-1", "agent-mig-2");
    /** Long enough that a move finished by the tasks' exits is told apart from one finished by the deadline. */
    private static final int GRACE = 40;

    @ConfigProperty(name = "gantry.nats.url")
    String natsUrl;

    @Inject
    TestDatabase db;

    private final List<UUID> started = new ArrayList<>();

    private static NodeInfo node(String name) {
        return new NodeInfo(name, MODEL, 8, List.of(List.of(0, 1, 2, 3, 4, 5, 6, 7)), List.of(), false, 128_000, 1_024_000,
                new NodeInfo.Topology("z1", "s1", "leaf-am"), null, Map.of(), List.of(TAINT), true, NodeInfo.Health.READY, 81_559, null, 0,
                false, Instant.now(), "AGENT", true);
    }

    private static JobQueued spec(UUID jobId, int gpus, boolean migratable) {
        return new JobQueued(jobId, "am-" + jobId.toString().substring(0, 8), "agent-migration-test", "ann", 0, Instant.now().minusSeconds(3600),
                null, List.of(new JobQueued.TaskGroup("worker", 1, gpus, null, 1000, 4000, null, List.of("sleep", "600"))), List.of(MODEL),
                null, null, false, Map.of(), List.of(new JobQueued.Toleration(TAINT.key(), TAINT.value())), true, migratable, 1_000_000L,
                migratable ? GRACE : null, migratable);
    }

    /** A migratable, checkpointable 2-GPU job an agent runs on {@code node}'s GPUs {@code gpus} (bound an hour ago). */
    private UUID running(String node, String gpus) {
        UUID jobId = UUID.randomUUID();
        started.add(jobId);
        db.execute("""
                with running as (
                    insert into running_job (job_id, queue, priority, spec, submitted_at, bound_at, due_at)
                    values (?::uuid, 'agent-migration-test', 0, ?, now() - interval '2 hours', now() - interval '1 hour', '9999-12-31T00:00:00Z'))
                insert into allocation (job_id, task, node, gpu_indices, allocated_at, cpu_millis, memory_mib)
                values (?::uuid, 'worker-0', ?, ?::integer[], now() - interval '1 hour', 1000, 4000)
                """, jobId.toString(), EventCodec.toJson(spec(jobId, 2, true)), jobId.toString(), node, gpus);
        return jobId;
    }

    @BeforeEach
    void startFromAnHourWithoutMoves() {
        DisruptionBudgetReset.forgetEarlierMoves(db);
    }

    @AfterEach
    void cancelAll() throws Exception {
        try (TestNats nats = TestNats.connect(natsUrl)) {
            for (UUID id : started) {
                nats.publish(EventEnvelope.of(Subjects.JOBS_CANCELLED, id.toString(), new JobCancelled(id, "agent-migration-test", "ann",
                        Instant.now())));
            }
        }
        await().atMost(Duration.ofSeconds(60)).until(() -> started.stream().allMatch(id ->
                db.queryLong("select count(*) from running_job where job_id = ?::uuid", id.toString())
                        + db.queryLong("select count(*) from pending_job where job_id = ?::uuid", id.toString()) == 0));
        for (UUID id : started) {
            db.execute("delete from job_migration where job_id = ?::uuid", id.toString());
        }
        started.clear();
    }

    private static JsonPath assignments(String node) {
        return given().auth().oauth2(TestTokens.agent(node)).when().get("/v1/agent/assignments?node=" + node)
                .then().statusCode(200).extract().jsonPath();
    }

    /** The job's assignment on {@code node} (null when it has none there). */
    private static Map<String, Object> assignment(String node, UUID jobId) {
        List<Map<String, Object>> all = assignments(node).getList("assignments");
        return all.stream().filter(a -> jobId.toString().equals(a.get("jobId"))).findFirst().orElse(null);
    }

    private static void report(String node, UUID jobId, long attempt, String state, Integer code) {
        Map<String, Object> r = new LinkedHashMap<>(Map.of("jobId", jobId.toString(), "attempt", attempt, "task", "worker-0", "state", state));
        if (code != null) {
            r.put("exitCode", code);
        }
        given().auth().oauth2(TestTokens.agent(node)).contentType(ContentType.JSON).body(r).when().post("/v1/agent/reports")
                .then().statusCode(200);
    }

    private long outbox(String subject, UUID jobId) {
        return db.queryLong("select count(*) from outbox_event where subject = ? and subject_id = ?", subject, jobId.toString());
    }

    private String nodeOf(UUID jobId) {
        return db.queryString("select string_agg(distinct node, ',') from allocation where job_id = ?::uuid", jobId.toString());
    }

    @Test
    void movingTasksThatCheckpointedAndExitedAreRelaunchedOnTheirNewNodeAtOnceAndTheWideJobIsPlaced() throws Exception {
        try (TestNats nats = TestNats.connect(natsUrl)) {
            for (String name : NODES) {
                nats.publish(EventEnvelope.of(Subjects.NODES_UPSERTED, name, new NodeChanged(System.nanoTime(), node(name))));
            }
        }
        await().atMost(Duration.ofSeconds(20)).until(() ->
                db.queryLong("select count(*) from node where name in ('agent-mig-1', 'agent-mig-2') and source = 'AGENT'") == 2);
        List<UUID> small = List.of(running("agent-mig-1", "{0,1}"), running("agent-mig-1", "{4,5}"),
                running("agent-mig-2", "{2,3}"), running("agent-mig-2", "{6,7}"));
        Map<UUID, String> from = new LinkedHashMap<>();
        Map<UUID, Long> attempts = new LinkedHashMap<>();
        for (UUID id : small) {
            from.put(id, nodeOf(id));
            Map<String, Object> a = assignment(nodeOf(id), id);
            attempts.put(id, ((Number) a.get("attempt")).longValue());
            report(nodeOf(id), id, attempts.get(id), "STARTED", null);
        }
        UUID wide = UUID.randomUUID();
        started.add(wide);
        try (TestNats nats = TestNats.connect(natsUrl)) {
            nats.publish(EventEnvelope.of(Subjects.JOBS_QUEUED, wide.toString(), spec(wide, 8, false)));
        }

        // two moves recorded: their agents are told to stop them with the job's own grace
        await().atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofMillis(100))
                .until(() -> small.stream().filter(id -> outbox(Subjects.PLACEMENTS_MIGRATED, id) > 0).count() == 2);
        List<UUID> moving = small.stream().filter(id -> outbox(Subjects.PLACEMENTS_MIGRATED, id) > 0).toList();
        for (UUID id : moving) {
            Map<String, Object> told = assignment(from.get(id), id);
            assertThat(told.get("stop")).as("job %s told to stop", id).isEqualTo(true);
            assertThat(((Number) told.get("stopGraceSeconds")).intValue()).isBetween(GRACE - 10, GRACE);
        }

        // each task checkpoints and exits: the move is finished now, well before its 40 s grace ends
        Instant exited = Instant.now();
        for (UUID id : moving) {
            report(from.get(id), id, attempts.get(id), "EXITED", 0);
        }
        await().atMost(Duration.ofSeconds(15)).pollInterval(Duration.ofMillis(100)).until(() -> moving.stream().allMatch(id ->
                db.queryLong("select count(*) from job_migration where job_id = ?::uuid and outcome = 'moved'", id.toString()) == 1));
        assertThat(Duration.between(exited, Instant.now())).isLessThan(Duration.ofSeconds(GRACE - 15));
        for (UUID id : moving) {
            assertThat(outbox(Subjects.PLACEMENTS_REQUEUED, id)).as("moved, not requeued").isZero();
            assertThat(db.queryLong("select count(*) from pending_job where job_id = ?::uuid", id.toString())).isZero();
            assertThat(outbox(Subjects.PLACEMENTS_FAILED, id) + outbox(Subjects.PLACEMENTS_COMPLETED, id)).isZero();
            String to = nodeOf(id);
            assertThat(to).isNotEqualTo(from.get(id));
            // the target node's agent runs it now, as a new attempt it has not started yet
            Map<String, Object> relaunched = assignment(to, id);
            assertThat(relaunched).as("job %s assigned on %s", id, to).isNotNull();
            assertThat(((Number) relaunched.get("attempt")).longValue()).isNotEqualTo(attempts.get(id));
            assertThat(relaunched.get("stop")).isEqualTo(false);
            assertThat(assignment(from.get(id), id)).as("gone from %s", from.get(id)).isNull();
        }
        // the node both moves emptied holds the 8-GPU job
        await().atMost(Duration.ofSeconds(30)).until(() -> outbox(Subjects.PLACEMENTS_BOUND, wide) == 1);
        assertThat(nodeOf(wide)).isEqualTo(from.get(moving.get(0)));
        assertThat(assignment(nodeOf(wide), wide)).isNotNull();
    }
}
