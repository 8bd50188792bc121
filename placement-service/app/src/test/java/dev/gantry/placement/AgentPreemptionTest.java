package dev.gantry.placement;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

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
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Preempting a checkpointable job whose tasks node agents run (issue 21): the grace is the job's own
 * {@code checkpointGraceSeconds} (the test profile's default is 1 s), its tasks are marked
 * {@code stop} with that grace, and once every task has exited the job is back in line at once
 * (QUEUED, not FAILED), long before the deadline.
 */
@QuarkusTest
class AgentPreemptionTest {

    private static final String MODEL = "AGENT-PREEMPT-GPU";
    private static final NodeInfo.Taint TAINT = new NodeInfo.Taint("gantry.dev/test", "agent-preemption", "NoSchedule");
    private static final String NODE = "agent-preempt-1";

    @ConfigProperty(name = "gantry.nats.url")
    String natsUrl;

    @Inject
    TestDatabase db;

    private final List<UUID> started = new java.util.ArrayList<>();

    private static NodeInfo node() {
        return new NodeInfo(NODE, MODEL, 4, List.of(List.of(0, 1, 2, 3)), List.of(), false, 64_000, 512_000,
                new NodeInfo.Topology("z1", "s1", "leaf-ap"), null, Map.of(), List.of(TAINT), true, NodeInfo.Health.READY, 46_068, null, 0,
                false, Instant.now(), "AGENT", true);
    }

    private EventEnvelope<JobQueued> job(UUID jobId, int priority, boolean checkpointable, Integer grace) {
        started.add(jobId);
        JobQueued job = new JobQueued(jobId, "ap-" + jobId.toString().substring(0, 8), "preemption-test", "ann", priority, Instant.now(),
                null, List.of(new JobQueued.TaskGroup("worker", 2, 2, null, 1000, 1000, null, List.of("sleep", "600"))),
                List.of(MODEL), null, null, false, Map.of(), List.of(new JobQueued.Toleration(TAINT.key(), TAINT.value())), true,
                checkpointable, 1_000_000L, grace);
        return EventEnvelope.of(Subjects.JOBS_QUEUED, jobId.toString(), job);
    }

    @AfterEach
    void cancelAll() throws Exception {
        try (TestNats nats = TestNats.connect(natsUrl)) {
            for (UUID id : started) {
                nats.publish(EventEnvelope.of(Subjects.JOBS_CANCELLED, id.toString(), new JobCancelled(id, "preemption-test", "ann", Instant.now())));
            }
        }
        await().atMost(Duration.ofSeconds(20)).until(() -> started.stream().allMatch(id ->
                db.queryLong("select count(*) from running_job where job_id = ?::uuid", id.toString())
                        + db.queryLong("select count(*) from pending_job where job_id = ?::uuid", id.toString()) == 0));
        started.clear();
    }

    private long outbox(String subject, UUID jobId) {
        return db.queryLong("select count(*) from outbox_event where subject = ? and subject_id = ?", subject, jobId.toString());
    }

    private static JsonPath assignments() {
        return given().auth().oauth2(TestTokens.agent(NODE)).when().get("/v1/agent/assignments?node=" + NODE)
                .then().statusCode(200).extract().jsonPath();
    }

    private static void report(UUID jobId, long attempt, String task, String state, Integer code) {
        Map<String, Object> r = new java.util.LinkedHashMap<>(Map.of("jobId", jobId.toString(), "attempt", attempt, "task", task,
                "state", state));
        if (code != null) {
            r.put("exitCode", code);
        }
        given().auth().oauth2(TestTokens.agent(NODE)).contentType(ContentType.JSON).body(r).when().post("/v1/agent/reports")
                .then().statusCode(200);
    }

    @Test
    void theJobsOwnGraceStopsItsTasksAndItIsBackInLineOnceTheyHaveExited() throws Exception {
        try (TestNats nats = TestNats.connect(natsUrl)) {
            nats.publish(EventEnvelope.of(Subjects.NODES_UPSERTED, NODE, new NodeChanged(System.nanoTime(), node())));
        }
        await().atMost(Duration.ofSeconds(20)).until(() -> db.queryLong("select count(*) from node where name = ? and source = 'AGENT'", NODE) == 1);
        UUID victim = UUID.randomUUID();
        try (TestNats nats = TestNats.connect(natsUrl)) {
            nats.publish(job(victim, 0, true, 40));
        }
        await().atMost(Duration.ofSeconds(20)).until(() -> outbox(Subjects.PLACEMENTS_BOUND, victim) == 1);
        long attempt = assignments().getLong("assignments[0].attempt");
        report(victim, attempt, "worker-0", "STARTED", null);
        report(victim, attempt, "worker-1", "STARTED", null);

        UUID preemptor = UUID.randomUUID();
        try (TestNats nats = TestNats.connect(natsUrl)) {
            nats.publish(job(preemptor, 1000, false, null));
        }
        await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(50)).until(() -> outbox(Subjects.PLACEMENTS_PREEMPTED, victim) == 1);
        // the job's own 40 s, not the configured 1 s
        assertThat(db.queryString("select envelope from outbox_event where subject = ? and subject_id = ?",
                Subjects.PLACEMENTS_PREEMPTED, victim.toString())).contains("checkpoint grace 40s");
        JsonPath told = assignments();
        assertThat(told.getList("assignments.stop", Boolean.class)).containsOnly(true);
        assertThat(told.getList("assignments.stopGraceSeconds", Integer.class)).allSatisfy(g -> assertThat(g).isBetween(30, 40));

        // one task checkpointed and exited 0, the other was SIGTERMed (143): neither fails the job
        report(victim, attempt, "worker-0", "EXITED", 0);
        assertThat(db.queryLong("select count(*) from running_job where job_id = ?::uuid", victim.toString())).isEqualTo(1);
        report(victim, attempt, "worker-1", "EXITED", 143);
        // every task has exited: back in line now (QUEUED), not at the 40 s deadline, and the preemptor gets the GPUs
        await().atMost(Duration.ofSeconds(10)).until(() -> db.queryLong("select count(*) from pending_job where job_id = ?::uuid",
                victim.toString()) == 1);
        assertThat(outbox(Subjects.PLACEMENTS_FAILED, victim)).isZero();
        await().atMost(Duration.ofSeconds(10)).until(() -> outbox(Subjects.PLACEMENTS_BOUND, preemptor) == 1);
    }
}
