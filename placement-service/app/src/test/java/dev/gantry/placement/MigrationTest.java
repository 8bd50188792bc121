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
import jakarta.inject.Inject;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Defragmentation carried out, in standalone mode on the real PostgreSQL and JetStream: two 8-GPU
 * nodes with 4 + 4 GPUs free between migratable 2-GPU jobs, and an 8-GPU job waiting. The solver
 * plans to move two jobs; the binder records the moves, holds their new GPUs, stops the jobs with
 * their checkpoint grace (1 s, simulated), moves them as new attempts, and the 8-GPU job is placed
 * on the node they left. The nodes carry a taint and a model of their own, so other tests' jobs
 * never land on them.
 */
@QuarkusTest
class MigrationTest {

    private static final String MODEL = "H100-MIGRATE-TEST";
    private static final NodeInfo.Taint TAINT = new NodeInfo.Taint("gantry.dev/test", "migration", "NoSchedule");
    private static final List<String> NODES = List.of("mig-1", "mig-2");

    @ConfigProperty(name = "gantry.nats.url")
    String natsUrl;

    @Inject
    TestDatabase db;

    @Inject
    MeterRegistry registry;

    private final List<UUID> started = new ArrayList<>();

    private static NodeInfo node(String name) {
        return new NodeInfo(name, MODEL, 8, List.of(List.of(0, 1, 2, 3, 4, 5, 6, 7)), List.of(), false,
                128_000, 1_024_000, new NodeInfo.Topology("z1", "s1", "leaf-m"), null, Map.of(), List.of(TAINT), true,
                NodeInfo.Health.READY, 81_559, null, 0, false, Instant.now());
    }

    private JobQueued spec(UUID jobId, String queue, int gpus, boolean migratable) {
        return new JobQueued(jobId, "mig-" + jobId.toString().substring(0, 8), queue, "ann", 0, Instant.now().minusSeconds(3600),
                null, List.of(new JobQueued.TaskGroup("worker", 1, gpus, null, 1000, 4000)), List.of(MODEL), null, null, false,
                Map.of(), List.of(new JobQueued.Toleration(TAINT.key(), TAINT.value())), true, migratable, 1_000_000L, 1, migratable);
    }

    /** A migratable 2-GPU job already running on {@code node}'s GPUs {@code gpus} (bound an hour ago: not protected). */
    private UUID running(String queue, String node, String gpus) {
        UUID jobId = UUID.randomUUID();
        started.add(jobId);
        db.execute("""
                with running as (
                    insert into running_job (job_id, queue, priority, spec, submitted_at, bound_at, due_at)
                    values (?::uuid, ?, 0, ?, now() - interval '2 hours', now() - interval '1 hour', now() + interval '1 day'))
                insert into allocation (job_id, task, node, gpu_indices, allocated_at, cpu_millis, memory_mib)
                values (?::uuid, 'worker-0', ?, ?::integer[], now() - interval '1 hour', 1000, 4000)
                """, jobId.toString(), queue, EventCodec.toJson(spec(jobId, queue, 2, true)), jobId.toString(), node, gpus);
        return jobId;
    }

    /** The fragmented cluster: 4 + 4 GPUs free, none with 8. */
    private List<UUID> fragment(String queue) {
        return List.of(running(queue, "mig-1", "{0,1}"), running(queue, "mig-1", "{4,5}"),
                running(queue, "mig-2", "{2,3}"), running(queue, "mig-2", "{6,7}"));
    }

    private UUID submitWide(String queue) throws Exception {
        UUID wide = UUID.randomUUID();
        started.add(wide);
        try (TestNats nats = TestNats.connect(natsUrl)) {
            nats.publish(EventEnvelope.of(Subjects.JOBS_QUEUED, wide.toString(), spec(wide, queue, 8, false)));
        }
        return wide;
    }

    @BeforeEach
    void nodes() throws Exception {
        DisruptionBudgetReset.forgetEarlierMoves(db);
        try (TestNats nats = TestNats.connect(natsUrl)) {
            for (String name : NODES) {
                nats.publish(EventEnvelope.of(Subjects.NODES_UPSERTED, name, new NodeChanged(System.nanoTime(), node(name))));
            }
        }
        await().atMost(Duration.ofSeconds(20)).until(() ->
                db.queryLong("select count(*) from node where name in ('mig-1', 'mig-2') and not removed") == 2);
    }

    @AfterEach
    void cancelAll() throws Exception {
        try (TestNats nats = TestNats.connect(natsUrl)) {
            for (UUID id : started) {
                nats.publish(EventEnvelope.of(Subjects.JOBS_CANCELLED, id.toString(), new JobCancelled(id, "migration-test", "ann", Instant.now())));
            }
        }
        await().atMost(Duration.ofSeconds(60)).until(() -> started.stream().allMatch(id ->
                db.queryLong("select count(*) from running_job where job_id = ?::uuid", id.toString())
                        + db.queryLong("select count(*) from pending_job where job_id = ?::uuid", id.toString()) == 0));
        started.clear();
    }

    private long outbox(String subject, UUID jobId) {
        return db.queryLong("select count(*) from outbox_event where subject = ? and subject_id = ?", subject, jobId.toString());
    }

    private String nodesOf(UUID jobId) {
        return db.queryString("select string_agg(distinct node, ',') from allocation where job_id = ?::uuid", jobId.toString());
    }

    private long moves(List<UUID> jobs, String outcome) {
        return jobs.stream().mapToLong(id -> db.queryLong(
                "select count(*) from job_migration where job_id = ?::uuid and outcome is not distinct from ?", id.toString(), outcome)).sum();
    }

    private double migratedCounter() {
        return registry.get("gantry.placement.jobs.migrated").counter().count();
    }

    @Test
    void anEightGpuJobWaitingOnAFragmentedClusterIsPlacedByMovingTwoJobs() throws Exception {
        List<UUID> small = fragment("migration-test");
        double migratedBefore = migratedCounter();
        UUID wide = submitWide("migration-test");

        // the moves are recorded before anything acts: told to stop, the new GPUs held, the event out
        // a few windows (1 s each); generous for a loaded machine, where a fast-profile solve may take seconds
        await().atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofMillis(50))
                .until(() -> small.stream().mapToLong(id -> outbox(Subjects.PLACEMENTS_MIGRATED, id)).sum() >= 2);
        List<UUID> moved = small.stream().filter(id -> outbox(Subjects.PLACEMENTS_MIGRATED, id) > 0).toList();
        assertThat(moved).hasSize(2);
        assertThat(moved.stream().map(this::nodesOf).distinct().toList()).as("both moves empty one node").hasSize(1);
        String emptied = nodesOf(moved.get(0));

        // the grace over, the jobs hold their new GPUs and the 8-GPU job the node they left
        await().atMost(Duration.ofSeconds(60)).until(() -> outbox(Subjects.PLACEMENTS_BOUND, wide) == 1);
        assertThat(nodesOf(wide)).isEqualTo(emptied);
        assertThat(db.queryLong("select count(*) from allocation where job_id = ?::uuid", wide.toString())).isEqualTo(1);
        for (UUID id : moved) {
            assertThat(nodesOf(id)).as("job %s moved off %s", id, emptied).isNotEqualTo(emptied);
            assertThat(db.queryString("select evicting_until::text from running_job where job_id = ?::uuid", id.toString())).isNull();
            assertThat(db.queryString("select migration_targets from running_job where job_id = ?::uuid", id.toString())).isNull();
            assertThat(db.queryLong("select count(*) from running_job where job_id = ?::uuid and last_migrated_at is not null "
                    + "and bound_at > now() - interval '1 minute'", id.toString())).as("a new attempt").isEqualTo(1);
            assertThat(db.queryString("select string_agg(envelope, ' ') from outbox_event where subject = ? and subject_id = ?",
                    Subjects.PLACEMENTS_MIGRATED, id.toString())).contains("\"phase\":\"stopping\"").contains("\"phase\":\"moved\"");
        }
        assertThat(moves(moved, "moved")).isEqualTo(2);
        assertThat(moves(small, null)).as("no move left in flight").isZero();
        assertThat(small.stream().filter(id -> !moved.contains(id)).mapToLong(id -> outbox(Subjects.PLACEMENTS_MIGRATED, id)).sum())
                .as("the other jobs stay where they are").isZero();
        assertThat(migratedCounter() - migratedBefore).as("jobs_migrated_total counts moves done").isEqualTo(2.0);
        assertThat(small.stream().mapToLong(id -> outbox(Subjects.PLACEMENTS_PREEMPTED, id) + outbox(Subjects.PLACEMENTS_REQUEUED, id)).sum())
                .as("nobody preempted or requeued").isZero();
    }

    @Test
    void aQueueWhoseHourlyMovesAreSpentKeepsItsJobsWhereTheyAre() throws Exception {
        // gantry.placement.migration.queue-limits (test profile): migration-tight=1, and the wide job needs two moves
        List<UUID> small = fragment("migration-tight");
        List<String> where = small.stream().map(this::nodesOf).toList();
        UUID wide = submitWide("migration-tight");
        await().atMost(Duration.ofSeconds(20)).until(() -> db.queryLong("select count(*) from pending_job where job_id = ?::uuid",
                wide.toString()) == 1);
        await().during(Duration.ofSeconds(4)).atMost(Duration.ofSeconds(8)).until(() ->
                moves(small, null) + moves(small, "moved") == 0 && outbox(Subjects.PLACEMENTS_BOUND, wide) == 0);
        assertThat(small.stream().mapToLong(id -> outbox(Subjects.PLACEMENTS_MIGRATED, id)).sum()).as("all moves or none").isZero();
        assertThat(small.stream().map(this::nodesOf).toList()).as("nobody moved").isEqualTo(where);
        assertThat(small.stream().mapToLong(id -> db.queryLong("select count(*) from running_job where job_id = ?::uuid "
                + "and migration_targets is null and evicting_until is null", id.toString())).sum()).as("nobody told to stop").isEqualTo(4);
    }
}
