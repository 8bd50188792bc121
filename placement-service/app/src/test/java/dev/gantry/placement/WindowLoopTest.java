package dev.gantry.placement;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.gantry.contracts.events.EventEnvelope;
import dev.gantry.contracts.events.EventCodec;
import dev.gantry.contracts.events.Subjects;
import dev.gantry.contracts.placements.PlacementBound;
import dev.gantry.contracts.jobs.JobCancelled;
import dev.gantry.contracts.jobs.JobQueued;
import dev.gantry.contracts.nodes.NodeChanged;
import dev.gantry.contracts.nodes.NodeInfo;
import dev.gantry.contracts.nodes.NodeRemoved;
import dev.gantry.testing.TestDatabase;
import dev.gantry.testing.TestNats;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The window loop end to end inside the service: nodes and a job arrive over the real JetStream,
 * a window places the gang on real GPU indices, binds it with its event in the outbox, and the
 * standalone executor completes it. The nodes are tainted and of a model only these tests ask for,
 * so other tests' jobs never land on them.
 */
@QuarkusTest
class WindowLoopTest {

    private static final String MODEL = "H100-SXM5-80GB";
    /** Keeps jobs of other tests (and other sessions' events on the shared broker) off these nodes. */
    private static final NodeInfo.Taint TAINT = new NodeInfo.Taint("gantry.dev/test", "window-loop", "NoSchedule");

    @ConfigProperty(name = "gantry.nats.url")
    String natsUrl;

    @Inject
    TestDatabase db;

    @Inject
    MeterRegistry registry;

    private static NodeInfo node(String name) {
        return new NodeInfo(name, MODEL, 8, List.of(List.of(0, 1, 2, 3), List.of(4, 5, 6, 7)), List.of(), false,
                128_000, 1_024_000, new NodeInfo.Topology("z1", "s1", "leaf-1"), null, Map.of(), List.of(TAINT), true,
                NodeInfo.Health.READY, 81_920, null, 0, false, Instant.now());
    }

    private static EventEnvelope<JobQueued> job(UUID jobId, int replicas, int gpusPerReplica, long runtimeSeconds) {
        return job(jobId, replicas, gpusPerReplica, runtimeSeconds, 100, Instant.now());
    }

    private static EventEnvelope<JobQueued> job(UUID jobId, int replicas, int gpusPerReplica, long runtimeSeconds, int priority,
            Instant submittedAt) {
        JobQueued job = new JobQueued(jobId, "win-" + jobId.toString().substring(0, 8), "window-loop-test", "bob", priority,
                submittedAt, null, List.of(new JobQueued.TaskGroup("worker", replicas, gpusPerReplica, null, 8000, 32000)),
                List.of(MODEL), "nvlink", null, false, Map.of(), List.of(new JobQueued.Toleration(TAINT.key(), TAINT.value())), true,
                false, runtimeSeconds);
        return EventEnvelope.of(Subjects.JOBS_QUEUED, jobId.toString(), job);
    }

    @BeforeEach
    void nodes() throws Exception {
        try (TestNats nats = TestNats.connect(natsUrl)) {
            for (String name : List.of("h100-a", "h100-b")) {
                // versions grow across tests: a node removed by one test comes back in the next
                nats.publish(EventEnvelope.of(Subjects.NODES_UPSERTED, name, new NodeChanged(System.nanoTime(), node(name))));
            }
        }
        await().atMost(Duration.ofSeconds(20)).until(() ->
                db.queryLong("select count(*) from node where name in ('h100-a', 'h100-b') and not removed") == 2);
    }

    private long outbox(String subject, UUID jobId) {
        return db.queryLong("select count(*) from outbox_event where subject = ? and subject_id = ?", subject, jobId.toString());
    }

    @Test
    void gangIsPlacedOnDistinctGpusBoundAndCompleted() throws Exception {
        UUID jobId = UUID.randomUUID();
        try (TestNats nats = TestNats.connect(natsUrl)) {
            nats.publish(job(jobId, 2, 4, 300)); // 300 s x 0.01 = runs 3 s
        }
        String id = jobId.toString();
        await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(100)).until(() ->
                db.queryLong("select count(*) from allocation where job_id = ?::uuid", id) == 2);
        List<String> gpus = new ArrayList<>();
        for (int task = 0; task < 2; task++) {
            String node = db.queryString("select node from allocation where job_id = ?::uuid and task = ?", id, "worker-" + task);
            String indices = db.queryString("select array_to_string(gpu_indices, ',') from allocation where job_id = ?::uuid and task = ?",
                    id, "worker-" + task);
            assertThat(node).isIn("h100-a", "h100-b");
            assertThat(indices.split(",")).hasSize(4);
            for (String g : indices.split(",")) {
                assertThat(Integer.parseInt(g)).isBetween(0, 7);
                gpus.add(node + "/" + g);
            }
        }
        Set<String> distinct = new HashSet<>(gpus);
        assertThat(distinct).as("no GPU given twice").hasSize(8);
        assertThat(db.queryLong("select count(*) from pending_job where job_id = ?::uuid", id)).isZero();
        assertThat(outbox(Subjects.PLACEMENTS_BOUND, jobId)).isEqualTo(1);
        assertThat(db.queryString("select envelope from outbox_event where subject = ? and subject_id = ?",
                Subjects.PLACEMENTS_BOUND, id)).contains("\"gpus\":8").contains(MODEL);
        PlacementBound bound = EventCodec.decode(db.queryString("select envelope from outbox_event where subject = ? and subject_id = ?",
                Subjects.PLACEMENTS_BOUND, id), PlacementBound.class).payload();
        assertThat(bound.tasks()).as("each task's node and GPUs, as allocated").hasSize(2);
        for (PlacementBound.BoundTask t : bound.tasks()) {
            assertThat(String.join(",", t.gpus().stream().map(String::valueOf).toList())).isEqualTo(db.queryString(
                    "select array_to_string(gpu_indices, ',') from allocation where job_id = ?::uuid and task = ? and node = ?", id, t.task(), t.node()));
        }

        await().atMost(Duration.ofSeconds(20)).until(() -> outbox(Subjects.PLACEMENTS_COMPLETED, jobId) == 1);
        assertThat(db.queryLong("select count(*) from allocation where job_id = ?::uuid", id)).isZero();
        assertThat(db.queryLong("select count(*) from running_job where job_id = ?::uuid", id)).isZero();
        assertThat(registry.find("gantry.placement.jobs.placed").counter().count()).isGreaterThanOrEqualTo(1);
    }

    private void awaitProcessed(EventEnvelope<?> event) {
        await().atMost(Duration.ofSeconds(20)).until(() ->
                db.queryLong("select count(*) from processed_event where event_id = ?::uuid", event.eventId().toString()) == 1);
    }

    @Test
    void aJobsQueuedDeliveredAfterItsCancellationNeverRuns() throws Exception {
        UUID jobId = UUID.randomUUID();
        String id = jobId.toString();
        EventEnvelope<JobQueued> late = job(jobId, 1, 1, 1_000_000); // redelivered after the ack wait, behind its cancellation
        try (TestNats nats = TestNats.connect(natsUrl)) {
            nats.publish(EventEnvelope.of(Subjects.JOBS_CANCELLED, id, new JobCancelled(jobId, "window-loop-test", "bob", Instant.now())));
            nats.publish(late);
        }
        awaitProcessed(late);
        Thread.sleep(3000); // three windows (1 s in tests), and the fast path, had their chance to place it
        assertThat(db.queryLong("select count(*) from pending_job where job_id = ?::uuid", id)).isZero();
        assertThat(db.queryLong("select count(*) from allocation where job_id = ?::uuid", id)).isZero();
        assertThat(outbox(Subjects.PLACEMENTS_BOUND, jobId)).isZero();
    }

    @Test
    void aJobsQueuedDeliveredAgainAfterTheJobCompletedDoesNotRunItTwice() throws Exception {
        UUID jobId = UUID.randomUUID();
        String id = jobId.toString();
        EventEnvelope<JobQueued> first = job(jobId, 1, 2, 100); // runs 1 s
        try (TestNats nats = TestNats.connect(natsUrl)) {
            nats.publish(first);
        }
        await().atMost(Duration.ofSeconds(30)).until(() -> outbox(Subjects.PLACEMENTS_COMPLETED, jobId) == 1);
        // the same job again under a new event id: what a replay of the stream or a second relay would bring
        EventEnvelope<JobQueued> again = new EventEnvelope<>(UUID.randomUUID(), first.type(), first.occurredAt(), first.subjectId(),
                first.version(), first.payload(), first.sequence());
        try (TestNats nats = TestNats.connect(natsUrl)) {
            nats.publish(again);
        }
        awaitProcessed(again);
        Thread.sleep(3000); // three windows (1 s in tests), and the fast path, had their chance to place it
        assertThat(db.queryLong("select count(*) from pending_job where job_id = ?::uuid", id)).isZero();
        assertThat(outbox(Subjects.PLACEMENTS_BOUND, jobId)).isEqualTo(1);
    }

    @Test
    void aNodeShrunkUnderItsJobsIsQuarantinedAndTheOthersGoOnScheduling() throws Exception {
        UUID running = UUID.randomUUID();
        try (TestNats nats = TestNats.connect(natsUrl)) {
            nats.publish(job(running, 1, 3, 1_000_000)); // 3 GPUs of one NVLink island, for hours
        }
        await().atMost(Duration.ofSeconds(20)).until(() -> outbox(Subjects.PLACEMENTS_BOUND, running) == 1);
        String shrunk = db.queryString("select node from allocation where job_id = ?::uuid", running.toString());
        String other = shrunk.equals("h100-a") ? "h100-b" : "h100-a";

        // the cluster file now says the node has 2 GPUs, but the job holds 3 of them (one index is past the end)
        NodeInfo full = node(shrunk);
        NodeInfo two = new NodeInfo(shrunk, MODEL, 2, List.of(List.of(0, 1)), List.of(), false, full.cpuMillis(), full.memoryMiB(),
                full.topology(), null, Map.of(), full.taints(), true, NodeInfo.Health.READY, 81_920, null, 0, false, Instant.now());
        try (TestNats nats = TestNats.connect(natsUrl)) {
            nats.publish(EventEnvelope.of(Subjects.NODES_UPSERTED, shrunk, new NodeChanged(System.nanoTime(), two)));
        }
        await().atMost(Duration.ofSeconds(20)).until(() -> db.queryString("select info from node where name = ?", shrunk).contains("\"gpus\":2"));
        // found by the next window although nothing waits: the reason and the alert do not wait for new work
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> io.restassured.RestAssured.given().auth().oauth2(dev.gantry.testing.TestTokens.user("bob", "window-loop"))
                .when().get("/v1/quarantined-nodes").then().statusCode(200).body("node", org.hamcrest.Matchers.contains(shrunk)));

        UUID unrelated = UUID.randomUUID();
        try (TestNats nats = TestNats.connect(natsUrl)) {
            nats.publish(job(unrelated, 1, 4, 1_000_000)); // fits only on the other node
        }
        await().atMost(Duration.ofSeconds(10)).until(() -> outbox(Subjects.PLACEMENTS_BOUND, unrelated) == 1);
        assertThat(db.queryString("select node from allocation where job_id = ?::uuid", unrelated.toString())).isEqualTo(other);
        io.restassured.RestAssured.given().auth().oauth2(dev.gantry.testing.TestTokens.user("bob", "window-loop")).when().get("/v1/quarantined-nodes").then().statusCode(200)
                .body("node", org.hamcrest.Matchers.contains(shrunk))
                .body("[0].reason", org.hamcrest.Matchers.containsString("is not on node " + shrunk));
        io.restassured.RestAssured.given().when().get("/q/metrics").then().statusCode(200)
                .body(org.hamcrest.Matchers.containsString("gantry_placement_quarantined_nodes 1.0"));
        assertThat(db.queryLong("select count(*) from allocation where job_id = ?::uuid", running.toString()))
                .as("the job on the quarantined node keeps running where it is").isEqualTo(1);

        try (TestNats nats = TestNats.connect(natsUrl)) { // mended: back in scheduling
            nats.publish(EventEnvelope.of(Subjects.NODES_UPSERTED, shrunk, new NodeChanged(System.nanoTime(), node(shrunk))));
        }
        await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> io.restassured.RestAssured.given().auth().oauth2(dev.gantry.testing.TestTokens.user("bob", "window-loop")).when().get("/v1/quarantined-nodes")
                .then().statusCode(200).body("size()", org.hamcrest.Matchers.equalTo(0)));
        try (TestNats nats = TestNats.connect(natsUrl)) {
            for (UUID id : List.of(running, unrelated)) {
                nats.publish(EventEnvelope.of(Subjects.JOBS_CANCELLED, id.toString(), new JobCancelled(id, "window-loop-test", "bob", Instant.now())));
            }
        }
        await().atMost(Duration.ofSeconds(20)).until(() -> db.queryLong("select count(*) from allocation where job_id in (?::uuid, ?::uuid)",
                running.toString(), unrelated.toString()) == 0);
    }

    @Test
    void oversizedGangStaysPendingUntilCancelled() throws Exception {
        UUID jobId = UUID.randomUUID();
        String id = jobId.toString();
        try (TestNats nats = TestNats.connect(natsUrl)) {
            nats.publish(job(jobId, 3, 8, 60)); // 24 GPUs, the cluster has 16
        }
        await().atMost(Duration.ofSeconds(20)).until(() ->
                db.queryLong("select count(*) from pending_job where job_id = ?::uuid", id) == 1);
        long windows = registry.find("gantry.placement.window").timer().count();
        await().atMost(Duration.ofSeconds(20)).until(() -> registry.find("gantry.placement.window").timer().count() >= windows + 3);
        assertThat(db.queryLong("select count(*) from pending_job where job_id = ?::uuid", id)).isEqualTo(1);
        assertThat(db.queryLong("select count(*) from allocation where job_id = ?::uuid", id)).isZero();
        assertThat(outbox(Subjects.PLACEMENTS_BOUND, jobId)).isZero();
        io.restassured.RestAssured.given().when().get("/q/metrics").then().statusCode(200)
                .body(org.hamcrest.Matchers.containsString("gantry_placement_window_seconds_count"))
                .body(org.hamcrest.Matchers.containsString("gantry_placement_jobs_placed_total"))
                .body(org.hamcrest.Matchers.containsString("gantry_placement_plans_rejected_total"))
                .body(org.hamcrest.Matchers.containsString("gantry_placement_window_limit_seconds"));

        try (TestNats nats = TestNats.connect(natsUrl)) {
            nats.publish(EventEnvelope.of(Subjects.JOBS_CANCELLED, id, new JobCancelled(jobId, "window-loop-test", "bob", Instant.now())));
        }
        await().atMost(Duration.ofSeconds(20)).until(() ->
                db.queryLong("select count(*) from pending_job where job_id = ?::uuid", id) == 0);
    }

    @Test
    void higherPriorityGangPreemptsAndTheVictimRequeuesWithItsSubmissionTime() throws Exception {
        UUID low = UUID.randomUUID();
        UUID high = UUID.randomUUID();
        Instant lowSubmitted = Instant.now().minusSeconds(3600).truncatedTo(ChronoUnit.MILLIS);
        try (TestNats nats = TestNats.connect(natsUrl)) {
            nats.publish(job(low, 4, 4, 1_000_000, 0, lowSubmitted)); // fills both nodes (4-GPU islands), runs for hours
        }
        await().atMost(Duration.ofSeconds(20)).until(() -> outbox(Subjects.PLACEMENTS_BOUND, low) == 1);
        try (TestNats nats = TestNats.connect(natsUrl)) {
            nats.publish(job(high, 4, 4, 1_000_000, 1000, Instant.now()));
        }
        await().atMost(Duration.ofSeconds(20)).until(() -> outbox(Subjects.PLACEMENTS_BOUND, high) == 1);
        assertThat(outbox(Subjects.PLACEMENTS_PREEMPTED, low)).isEqualTo(1);
        assertThat(db.queryLong("select count(*) from allocation where job_id = ?::uuid", low.toString())).isZero();
        assertThat(db.queryLong("select count(*) from allocation where job_id = ?::uuid", high.toString())).isEqualTo(4);
        assertThat(db.queryLong("select (extract(epoch from submitted_at) * 1000)::bigint from pending_job where job_id = ?::uuid",
                low.toString())).isEqualTo(lowSubmitted.toEpochMilli());

        try (TestNats nats = TestNats.connect(natsUrl)) { // leave the nodes free for the other tests
            nats.publish(EventEnvelope.of(Subjects.JOBS_CANCELLED, high.toString(), new JobCancelled(high, "window-loop-test", "bob", Instant.now())));
            nats.publish(EventEnvelope.of(Subjects.JOBS_CANCELLED, low.toString(), new JobCancelled(low, "window-loop-test", "bob", Instant.now())));
        }
        await().atMost(Duration.ofSeconds(20)).until(() -> outbox(Subjects.PLACEMENTS_COMPLETED, high) == 1
                && db.queryLong("select count(*) from pending_job where job_id = ?::uuid", low.toString()) == 0);
        assertThat(db.queryLong("select count(*) from allocation where job_id = ?::uuid", high.toString())).isZero();
    }

    @Test
    void jobOnALostNodeReturnsToPending() throws Exception {
        UUID jobId = UUID.randomUUID();
        String id = jobId.toString();
        try (TestNats nats = TestNats.connect(natsUrl)) {
            nats.publish(job(jobId, 4, 4, 1_000_000, 100, Instant.now())); // both nodes, runs for hours
        }
        await().atMost(Duration.ofSeconds(20)).until(() -> outbox(Subjects.PLACEMENTS_BOUND, jobId) == 1);
        try (TestNats nats = TestNats.connect(natsUrl)) {
            nats.publish(EventEnvelope.of(Subjects.NODES_REMOVED, "h100-a", new NodeRemoved(System.nanoTime(), "h100-a")));
        }
        await().atMost(Duration.ofSeconds(20)).until(() -> outbox(Subjects.PLACEMENTS_REQUEUED, jobId) == 1);
        assertThat(outbox(Subjects.PLACEMENTS_FAILED, jobId)).as("a lost node is not the job's failure").isZero();
        assertThat(db.queryLong("select count(*) from allocation where job_id = ?::uuid", id)).isZero();
        assertThat(db.queryLong("select count(*) from pending_job where job_id = ?::uuid", id)).isEqualTo(1);

        try (TestNats nats = TestNats.connect(natsUrl)) {
            nats.publish(EventEnvelope.of(Subjects.JOBS_CANCELLED, id, new JobCancelled(jobId, "window-loop-test", "bob", Instant.now())));
        }
        await().atMost(Duration.ofSeconds(20)).until(() ->
                db.queryLong("select count(*) from pending_job where job_id = ?::uuid", id) == 0);
    }
}
