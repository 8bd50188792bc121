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
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.Test;

/**
 * What a waiting job's owner learns: the window stores why it waits and tells admission once per
 * change ({@code placements.pending}); and the window's figures reach {@code /q/metrics} under the
 * names the alerts and dashboard use.
 */
@QuarkusTest
class PendingReasonTest {

    private static final String MODEL = "H100-SXM5-80GB";
    private static final NodeInfo.Taint TAINT = new NodeInfo.Taint("gantry.dev/test", "pending-reason", "NoSchedule");

    @ConfigProperty(name = "gantry.nats.url")
    String natsUrl;

    @Inject
    TestDatabase db;

    @Inject
    MeterRegistry registry;

    private static NodeInfo node(String name) {
        return new NodeInfo(name, MODEL, 8, List.of(List.of(0, 1, 2, 3), List.of(4, 5, 6, 7)), List.of(), false,
                128_000, 1_024_000, new NodeInfo.Topology("z1", "s1", "leaf-pr"), null, Map.of(), List.of(TAINT), true,
                NodeInfo.Health.READY, 81_920, null, 0, false, Instant.now());
    }

    @Test
    void anOversizedGangWaitsWithAReasonThatNamesTheShortfallSentOncePerChange() throws Exception {
        try (TestNats nats = TestNats.connect(natsUrl)) {
            nats.publish(EventEnvelope.of(Subjects.NODES_UPSERTED, "pr-a", new NodeChanged(System.nanoTime(), node("pr-a"))));
        }
        UUID jobId = UUID.randomUUID();
        String id = jobId.toString();
        JobQueued job = new JobQueued(jobId, "pr-gang", "pending-reason-test", "bob", 100, Instant.now(), null,
                List.of(new JobQueued.TaskGroup("worker", 2, 8, null, 4000, 16000)), List.of(MODEL), null, null, false, Map.of(),
                List.of(new JobQueued.Toleration(TAINT.key(), TAINT.value())), true, false, 60L);
        try (TestNats nats = TestNats.connect(natsUrl)) {
            nats.publish(EventEnvelope.of(Subjects.JOBS_QUEUED, id, job)); // 16 GPUs; the only node of its kind has 8
        }
        await().atMost(Duration.ofSeconds(20)).until(() ->
                db.queryString("select reason from pending_job where job_id = ?::uuid", id) != null);
        String reason = db.queryString("select reason from pending_job where job_id = ?::uuid", id);
        assertThat(reason).contains("16").contains(MODEL);

        long windows = registry.find("gantry.placement.window").timer().count();
        await().atMost(Duration.ofSeconds(20)).until(() -> registry.find("gantry.placement.window").timer().count() >= windows + 3);
        assertThat(db.queryLong("select count(*) from outbox_event where subject = ? and subject_id = ?",
                Subjects.PLACEMENTS_PENDING, id)).as("sent when the reason changes, not every window").isEqualTo(1);
        assertThat(db.queryString("select envelope from outbox_event where subject = ? and subject_id = ?",
                Subjects.PLACEMENTS_PENDING, id)).contains(reason.replace("\"", "\\\""));

        String metrics = given().when().get("/q/metrics").then().statusCode(200).extract().asString();
        for (String name : List.of("gantry_placement_window_seconds_count", "gantry_placement_solve_seconds_count",
                "gantry_placement_window_overruns_total", "gantry_placement_window_limit_seconds", "gantry_placement_plans_rejected_total",
                "gantry_placement_jobs_placed_total", "gantry_placement_jobs_preempted_total", "gantry_placement_jobs_migrated_total",
                "gantry_placement_score{level=\"hard\"}", "gantry_placement_stranded_gpus", "gantry_placement_whole_free_nodes",
                "gantry_placement_pending_jobs{queue=\"pending-reason-test\"}",
                "gantry_placement_oldest_pending_seconds{queue=\"pending-reason-test\"}",
                "gantry_placement_queue_wait_seconds_bucket", "gantry_placement_fastpath_seconds_count")) {
            assertThat(metrics).as(name).contains(name);
        }

        try (TestNats nats = TestNats.connect(natsUrl)) {
            nats.publish(EventEnvelope.of(Subjects.JOBS_CANCELLED, id, new JobCancelled(jobId, "pending-reason-test", "bob", Instant.now())));
        }
        await().atMost(Duration.ofSeconds(20)).until(() -> db.queryLong("select count(*) from pending_job where job_id = ?::uuid", id) == 0);
    }
}
