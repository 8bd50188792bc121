package dev.gantry.placement;

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
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import jakarta.inject.Inject;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.Test;

/**
 * The fast path with the window out of the way (windows switched off): a job that fits at once is
 * bound as soon as its event is stored; a job behind a waiting job that would take the same GPUs
 * is left to the window; a burst of arrivals is planned by one window.
 */
@QuarkusTest
@TestProfile(FastPathTest.NoWindow.class)
class FastPathTest {

    public static class NoWindow implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of("gantry.placement.window", "off"); // the scheduler never runs a window
        }
    }

    private static final String MODEL = "H100-SXM5-80GB";
    /** The burst test's nodes and jobs: a model of their own, so neither test can use the other's GPUs. */
    private static final String BURST_MODEL = "A100-SXM4-80GB";
    private static final NodeInfo.Taint TAINT = new NodeInfo.Taint("gantry.dev/test", "fast-path", "NoSchedule");

    @ConfigProperty(name = "gantry.nats.url")
    String natsUrl;

    @Inject
    TestDatabase db;

    @Inject
    MeterRegistry registry;

    private static NodeInfo node(String name, String model) {
        return new NodeInfo(name, model, 8, List.of(List.of(0, 1, 2, 3), List.of(4, 5, 6, 7)), List.of(), false,
                128_000, 1_024_000, new NodeInfo.Topology("z1", "s1", "leaf-fp"), null, Map.of(), List.of(TAINT), true,
                NodeInfo.Health.READY, 81_920, null, 0, false, Instant.now());
    }

    private static EventEnvelope<JobQueued> job(UUID jobId, int replicas, int gpus, int priority, Instant submittedAt) {
        return job(jobId, replicas, gpus, priority, submittedAt, MODEL);
    }

    private static EventEnvelope<JobQueued> job(UUID jobId, int replicas, int gpus, int priority, Instant submittedAt, String model) {
        JobQueued job = new JobQueued(jobId, "fp-" + jobId.toString().substring(0, 8), "fast-path-test", "bob", priority,
                submittedAt, null, List.of(new JobQueued.TaskGroup("worker", replicas, gpus, null, 4000, 16000)),
                List.of(model), null, null, false, Map.of(), List.of(new JobQueued.Toleration(TAINT.key(), TAINT.value())), false,
                false, 1_000_000L);
        return EventEnvelope.of(Subjects.JOBS_QUEUED, jobId.toString(), job);
    }

    /** {@code count} one-GPU jobs of {@code model}, published {@code gapMillis} apart; their ids. */
    private List<UUID> arriveApart(int count, long gapMillis, String model) throws Exception {
        List<UUID> ids = new java.util.ArrayList<>();
        try (TestNats nats = TestNats.connect(natsUrl)) {
            for (int i = 0; i < count; i++) {
                UUID id = UUID.randomUUID();
                ids.add(id);
                nats.publish(job(id, 1, 1, 100, Instant.now(), model));
                Thread.sleep(gapMillis);
            }
        }
        return ids;
    }

    /** Cancels the jobs and waits until placement has released all their GPUs. */
    private void cancelAndAwaitFreed(List<UUID> ids) throws Exception {
        try (TestNats nats = TestNats.connect(natsUrl)) {
            for (UUID id : ids) {
                nats.publish(EventEnvelope.of(Subjects.JOBS_CANCELLED, id.toString(), new JobCancelled(id, "fast-path-test", "bob", Instant.now())));
            }
        }
        await().atMost(Duration.ofSeconds(20)).until(() -> ids.stream().allMatch(id ->
                db.queryLong("select count(*) from allocation where job_id = ?::uuid", id.toString()) == 0));
    }

    private long bound(UUID jobId) {
        return db.queryLong("select count(*) from outbox_event where subject = ? and subject_id = ?", Subjects.PLACEMENTS_BOUND,
                jobId.toString());
    }

    @Test
    void aJobThatFitsIsBoundWithoutAWindowAndOneBehindAWaitingGangIsNot() throws Exception {
        try (TestNats nats = TestNats.connect(natsUrl)) {
            nats.publish(EventEnvelope.of(Subjects.NODES_UPSERTED, "fp-a", new NodeChanged(System.nanoTime(), node("fp-a", MODEL))));
        }
        await().atMost(Duration.ofSeconds(20)).until(() -> db.queryLong("select count(*) from node where name = 'fp-a'") == 1);
        long windowsBefore = registry.find("gantry.placement.window").timer().count();
        long fastBefore = registry.find("gantry.placement.fastpath").timer().count();

        UUID small = UUID.randomUUID();
        try (TestNats nats = TestNats.connect(natsUrl)) {
            nats.publish(job(small, 1, 4, 100, Instant.now()));
        }
        await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(50)).until(() -> bound(small) == 1);
        assertThat(registry.find("gantry.placement.window").timer().count()).as("bound with no window: by the fast path")
                .isEqualTo(windowsBefore);
        // the latency is recorded just after the binding commits
        await().atMost(Duration.ofSeconds(5)).until(() -> registry.find("gantry.placement.fastpath").timer().count() > fastBefore);

        // a 2x4 gang waits for the 4 GPUs the small job holds; a later job of lower priority asking for
        // the 4 free GPUs would take what the gang is waiting for only if the gang could not use them: it can
        UUID gang = UUID.randomUUID();
        UUID later = UUID.randomUUID();
        try (TestNats nats = TestNats.connect(natsUrl)) {
            nats.publish(job(gang, 2, 4, 500, Instant.now()));
        }
        // generous waits: they only guard against a hang (the machine running CI is shared and noisy)
        await().atMost(Duration.ofSeconds(30)).until(() ->
                db.queryLong("select count(*) from pending_job where job_id = ?::uuid", gang.toString()) == 1);
        try (TestNats nats = TestNats.connect(natsUrl)) {
            nats.publish(job(later, 1, 4, 10, Instant.now()));
        }
        await().atMost(Duration.ofSeconds(30)).until(() ->
                db.queryLong("select count(*) from pending_job where job_id = ?::uuid", later.toString()) == 1);
        Thread.sleep(1000);
        assertThat(bound(gang)).isZero();
        assertThat(bound(later)).as("the gang ahead in line can use those GPUs once they free up; greedy gives it the first pick")
                .isZero();
        assertThat(registry.find("gantry.placement.window").timer().count()).as("no window ran").isEqualTo(windowsBefore);

        try (TestNats nats = TestNats.connect(natsUrl)) {
            for (UUID id : List.of(small, gang, later)) {
                nats.publish(EventEnvelope.of(Subjects.JOBS_CANCELLED, id.toString(), new JobCancelled(id, "fast-path-test", "bob", Instant.now())));
            }
        }
        await().atMost(Duration.ofSeconds(10)).until(() ->
                db.queryLong("select count(*) from allocation where job_id = ?::uuid", small.toString()) == 0);
    }

    @Test
    void aJobAnotherReplicaStoredIsPlacedByThisLeadersFastPath() throws Exception {
        String model = "L40S-48GB"; // nodes and job of this test alone
        try (TestNats nats = TestNats.connect(natsUrl)) {
            nats.publish(EventEnvelope.of(Subjects.NODES_UPSERTED, "fp-other", new NodeChanged(System.nanoTime(), node("fp-other", model))));
        }
        await().atMost(Duration.ofSeconds(20)).until(() -> db.queryLong("select count(*) from node where name = 'fp-other'") == 1);
        long windowsBefore = registry.find("gantry.placement.window").timer().count();
        double greedyBurstsBefore = registry.find("gantry.placement.bursts.greedy").counter().count();

        // what another replica's jobs consumer does: store the job and signal it in one transaction; no event reaches this one
        UUID id = UUID.randomUUID();
        JobQueued spec = job(id, 1, 2, 100, Instant.now(), model).payload();
        db.queryString("with stored as (insert into pending_job (job_id, name, queue, priority, total_gpus, spec, submitted_at, received_at) "
                + "values (?::uuid, ?, ?, ?, 2, ?, now(), now()) returning job_id) select pg_notify('gantry_jobs_queued', job_id || ' ' || ?) "
                + "from stored", id.toString(), spec.name(), spec.queue(), spec.priority(), EventCodec.toJson(spec),
                Long.toString(System.currentTimeMillis()));
        await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(50)).until(() -> bound(id) == 1);
        assertThat(registry.find("gantry.placement.window").timer().count()).as("bound by the fast path, no window ran")
                .isEqualTo(windowsBefore);

        try (TestNats nats = TestNats.connect(natsUrl)) {
            nats.publish(EventEnvelope.of(Subjects.JOBS_CANCELLED, id.toString(), new JobCancelled(id, "fast-path-test", "bob", Instant.now())));
        }
        await().atMost(Duration.ofSeconds(10)).until(() ->
                db.queryLong("select count(*) from allocation where job_id = ?::uuid", id.toString()) == 0);
    }

    /**
     * Burst windows start at most every {@code gantry.placement.burst.window-gap} (250 ms): 48 jobs
     * arriving 25 ms apart (1.2 s) are planned by a handful of windows, not by one window after
     * another as fast as they end (each reads and checks the whole cluster whatever it plans).
     */
    @Test
    void burstWindowsStartAtMostOnceAGap() throws Exception {
        String model = "L40S";
        try (TestNats nats = TestNats.connect(natsUrl)) {
            for (int n = 0; n < 8; n++) {
                nats.publish(EventEnvelope.of(Subjects.NODES_UPSERTED, "fp-gap-" + n, new NodeChanged(System.nanoTime(), node("fp-gap-" + n, model))));
            }
        }
        await().atMost(Duration.ofSeconds(20)).until(() -> db.queryLong("select count(*) from node where name like 'fp-gap-%'") == 8);
        long windowsBefore = registry.find("gantry.placement.window").timer().count();

        long start = System.nanoTime();
        List<UUID> burst = arriveApart(48, 25, model);
        double spanSeconds = (System.nanoTime() - start) / 1e9;
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(100))
                .until(() -> burst.stream().allMatch(id -> bound(id) == 1));
        long windows = registry.find("gantry.placement.window").timer().count() - windowsBefore;
        // one per gap over the arrivals, one for the last of them, and one more for the consumer's late batches
        assertThat(windows).as("burst windows over %.2f s of arrivals", spanSeconds).isBetween(1L, (long) (spanSeconds / 0.25) + 3);

        cancelAndAwaitFreed(burst);
        Thread.sleep(1_100); // the arrival rate counts the last second: the next test's lone job is no burst
    }

    @Test
    void aBurstOfArrivalsIsPlannedByAWindowNotOneFastPathAfterAnother() throws Exception {
        try (TestNats nats = TestNats.connect(natsUrl)) {
            for (String name : List.of("fp-burst-1", "fp-burst-2")) {
                nats.publish(EventEnvelope.of(Subjects.NODES_UPSERTED, name, new NodeChanged(System.nanoTime(), node(name, BURST_MODEL))));
            }
        }
        await().atMost(Duration.ofSeconds(20)).until(() -> db.queryLong("select count(*) from node where name like 'fp-burst-%'") == 2);
        long windowsBefore = registry.find("gantry.placement.window").timer().count();
        double greedyBurstsBefore = registry.find("gantry.placement.bursts.greedy").counter().count();

        // windows are off in this profile: only the burst rule can run one. 90 ms apart (11 jobs/s), each
        // fast path is done before the next job arrives, so a rule that counted only the jobs waiting
        // for a fast path would never see this burst; one that counts arrivals per second does
        List<UUID> burst = arriveApart(16, 90, BURST_MODEL);
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(100))
                .until(() -> burst.stream().allMatch(id -> bound(id) == 1));
        assertThat(registry.find("gantry.placement.window").timer().count()).as("a window planned the burst")
                .isGreaterThan(windowsBefore);
        assertThat(registry.find("gantry.placement.bursts.greedy").counter().count())
                .as("every job of the burst fitted as things were: its window bound the fast path's greedy plan, no solve")
                .isGreaterThan(greedyBurstsBefore);

        cancelAndAwaitFreed(burst);
    }
}
