package dev.gantry.placement;

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
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Graceful, accounted preemption in standalone mode, on the real PostgreSQL and JetStream: a
 * checkpointable victim is told first and keeps its GPUs for the grace period (1 s in tests), the
 * preemptor is placed by a later window; a job placed again after a preemption is protected. Its
 * nodes carry a taint and a model of their own, so other tests' jobs never land on them.
 */
@QuarkusTest
class GracefulPreemptionTest {

    private static final String MODEL = "L40S-PREEMPT-TEST";
    private static final NodeInfo.Taint TAINT = new NodeInfo.Taint("gantry.dev/test", "preemption", "NoSchedule");
    private static final List<String> NODES = List.of("l40s-p1", "l40s-p2");

    @ConfigProperty(name = "gantry.nats.url")
    String natsUrl;

    @Inject
    TestDatabase db;

    private final List<UUID> started = new java.util.ArrayList<>();

    private static NodeInfo node(String name) {
        return new NodeInfo(name, MODEL, 4, List.of(List.of(0, 1, 2, 3)), List.of(), false,
                64_000, 512_000, new NodeInfo.Topology("z1", "s1", "leaf-p"), null, Map.of(), List.of(TAINT), true,
                NodeInfo.Health.READY, 46_068, null, 0, false, Instant.now());
    }

    /** A job over both nodes (2 x 4 GPUs), running for hours unless preempted. */
    private EventEnvelope<JobQueued> job(UUID jobId, int priority, Instant submittedAt, boolean checkpointable) {
        started.add(jobId);
        JobQueued job = new JobQueued(jobId, "pre-" + jobId.toString().substring(0, 8), "preemption-test", "ann", priority,
                submittedAt, null, List.of(new JobQueued.TaskGroup("worker", 2, 4, null, 4000, 16000)),
                List.of(MODEL), null, null, false, Map.of(), List.of(new JobQueued.Toleration(TAINT.key(), TAINT.value())), true,
                checkpointable, 1_000_000L);
        return EventEnvelope.of(Subjects.JOBS_QUEUED, jobId.toString(), job);
    }

    @BeforeEach
    void nodes() throws Exception {
        try (TestNats nats = TestNats.connect(natsUrl)) {
            for (String name : NODES) {
                nats.publish(EventEnvelope.of(Subjects.NODES_UPSERTED, name, new NodeChanged(System.nanoTime(), node(name))));
            }
        }
        await().atMost(Duration.ofSeconds(20)).until(() ->
                db.queryLong("select count(*) from node where name in ('l40s-p1', 'l40s-p2') and not removed") == 2);
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

    private long allocations(UUID jobId) {
        return db.queryLong("select count(*) from allocation where job_id = ?::uuid", jobId.toString());
    }

    @Test
    void checkpointableVictimIsToldFirstAndKeepsItsGpusForTheGracePeriod() throws Exception {
        UUID victim = UUID.randomUUID();
        UUID preemptor = UUID.randomUUID();
        Instant submitted = Instant.now().minusSeconds(7200).truncatedTo(ChronoUnit.MILLIS);
        try (TestNats nats = TestNats.connect(natsUrl)) {
            nats.publish(job(victim, 0, submitted, true));
        }
        await().atMost(Duration.ofSeconds(20)).until(() -> outbox(Subjects.PLACEMENTS_BOUND, victim) == 1);
        try (TestNats nats = TestNats.connect(natsUrl)) {
            nats.publish(job(preemptor, 1000, Instant.now(), false));
        }
        await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(50)).until(() -> outbox(Subjects.PLACEMENTS_PREEMPTED, victim) == 1);
        // told, but still holding its GPUs: the preemptor cannot have them yet
        String deadline = db.queryString("select evicting_until::text from running_job where job_id = ?::uuid", victim.toString());
        assertThat(deadline).as("grace period recorded").isNotNull();
        assertThat(allocations(victim)).isEqualTo(2);
        assertThat(allocations(preemptor)).isZero();
        assertThat(db.queryString("select envelope from outbox_event where subject = ? and subject_id = ?",
                Subjects.PLACEMENTS_PREEMPTED, victim.toString())).contains("checkpoint grace 1s");

        // grace over: the victim is back in line with its original submission time, the preemptor placed by a later window
        await().atMost(Duration.ofSeconds(20)).until(() -> outbox(Subjects.PLACEMENTS_BOUND, preemptor) == 1);
        assertThat(allocations(victim)).isZero();
        assertThat(allocations(preemptor)).isEqualTo(2);
        assertThat(db.queryLong("select (extract(epoch from submitted_at) * 1000)::bigint from pending_job where job_id = ?::uuid",
                victim.toString())).isEqualTo(submitted.toEpochMilli());
        assertThat(outbox(Subjects.PLACEMENTS_PREEMPTED, victim)).as("told once, not again when the grace ended").isEqualTo(1);
        assertThat(db.queryLong("select times from job_preemption where job_id = ?::uuid", victim.toString())).isEqualTo(1);
    }

    @Test
    void aJobPlacedAgainAfterAPreemptionIsProtected() throws Exception {
        UUID low = UUID.randomUUID();
        UUID first = UUID.randomUUID();
        UUID second = UUID.randomUUID();
        try (TestNats nats = TestNats.connect(natsUrl)) {
            nats.publish(job(low, 0, Instant.now().minusSeconds(600), false));
        }
        await().atMost(Duration.ofSeconds(20)).until(() -> outbox(Subjects.PLACEMENTS_BOUND, low) == 1);
        try (TestNats nats = TestNats.connect(natsUrl)) {
            nats.publish(job(first, 1000, Instant.now(), false));
        }
        // not checkpointable: released at once, the preemptor takes its GPUs
        await().atMost(Duration.ofSeconds(20)).until(() -> outbox(Subjects.PLACEMENTS_BOUND, first) == 1);
        assertThat(outbox(Subjects.PLACEMENTS_PREEMPTED, low)).isEqualTo(1);
        try (TestNats nats = TestNats.connect(natsUrl)) {
            nats.publish(EventEnvelope.of(Subjects.JOBS_CANCELLED, first.toString(), new JobCancelled(first, "preemption-test", "ann", Instant.now())));
        }
        // placed again: protected for gantry.placement.preemption.protection (5m)
        await().atMost(Duration.ofSeconds(20)).until(() -> outbox(Subjects.PLACEMENTS_BOUND, low) == 2);
        assertThat(db.queryString("select protected_until::text from running_job where job_id = ?::uuid", low.toString())).isNotNull();

        try (TestNats nats = TestNats.connect(natsUrl)) {
            nats.publish(job(second, 1000, Instant.now(), false));
        }
        await().atMost(Duration.ofSeconds(20)).until(() -> db.queryLong("select count(*) from pending_job where job_id = ?::uuid",
                second.toString()) == 1);
        // several 1 s windows go by: the higher-priority job waits, the protected one keeps running
        await().during(Duration.ofSeconds(4)).atMost(Duration.ofSeconds(8)).until(() ->
                outbox(Subjects.PLACEMENTS_PREEMPTED, low) == 1 && allocations(low) == 2 && outbox(Subjects.PLACEMENTS_BOUND, second) == 0);
    }
}
