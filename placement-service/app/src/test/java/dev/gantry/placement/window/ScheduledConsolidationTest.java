package dev.gantry.placement.window;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.gantry.contracts.events.EventCodec;
import dev.gantry.contracts.events.EventEnvelope;
import dev.gantry.contracts.events.Subjects;
import dev.gantry.contracts.jobs.JobCancelled;
import dev.gantry.contracts.jobs.JobQueued;
import dev.gantry.contracts.nodes.NodeChanged;
import dev.gantry.contracts.nodes.NodeInfo;
import dev.gantry.placement.DisruptionBudgetReset;
import dev.gantry.testing.TestDatabase;
import dev.gantry.testing.TestNats;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.vertx.VertxContextSupport;
import jakarta.inject.Inject;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalTime;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicReference;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Scheduled consolidation in standalone mode, on the real PostgreSQL and JetStream: two 8-GPU
 * nodes with 4 + 4 GPUs free between migratable 2-GPU jobs, nothing waiting, and an 8-GPU gang
 * shape that waited long before (a {@code gang_wait} row). A pass at the configured hours
 * (01:00-05:00 UTC by default; the test says what the clock shows) moves two jobs so that a whole
 * node is free; outside the hours, or with the hour's moves spent, nobody moves. The nodes carry a
 * taint and a model of their own, so other tests' jobs never land on them.
 */
@QuarkusTest
class ScheduledConsolidationTest {

    private static final String MODEL = "H100-CONSOLIDATE-TEST";
    private static final NodeInfo.Taint TAINT = new NodeInfo.Taint("gantry.dev/test", "consolidation", "NoSchedule");
    private static final List<String> NODES = List.of("con-1", "con-2");
    private static final String QUEUE = "consolidation-test";
    private static final ZonedDateTime AT_THREE = ZonedDateTime.now(ZoneOffset.UTC).with(LocalTime.of(3, 0));
    private static final ZonedDateTime AT_NOON = ZonedDateTime.now(ZoneOffset.UTC).with(LocalTime.NOON);

    @ConfigProperty(name = "gantry.nats.url")
    String natsUrl;

    @Inject
    TestDatabase db;

    @Inject
    MeterRegistry registry;

    @Inject
    ScheduledConsolidation consolidation;

    private final List<UUID> started = new ArrayList<>();

    private static NodeInfo node(String name) {
        return new NodeInfo(name, MODEL, 8, List.of(List.of(0, 1, 2, 3, 4, 5, 6, 7)), List.of(), false,
                128_000, 1_024_000, new NodeInfo.Topology("z1", "s1", "leaf-c"), null, Map.of(), List.of(TAINT), true,
                NodeInfo.Health.READY, 81_559, null, 0, false, Instant.now());
    }

    private static JobQueued spec(UUID jobId, int gpus, boolean migratable) {
        return spec(jobId, QUEUE, gpus, migratable);
    }

    private static JobQueued spec(UUID jobId, String queue, int gpus, boolean migratable) {
        return new JobQueued(jobId, "con-" + jobId.toString().substring(0, 8), queue, "ann", 0, Instant.now().minusSeconds(3600),
                null, List.of(new JobQueued.TaskGroup("worker", 1, gpus, null, 1000, 4000)), List.of(MODEL), null, null, false,
                Map.of(), List.of(new JobQueued.Toleration(TAINT.key(), TAINT.value())), true, migratable, 1_000_000L, 1, migratable);
    }

    /** A migratable 2-GPU job already running on {@code node}'s GPUs {@code gpus} (bound an hour ago: not protected). */
    private UUID running(String node, String gpus) {
        return running(QUEUE, node, gpus);
    }

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
    private List<UUID> fragment() {
        return fragment(QUEUE);
    }

    private List<UUID> fragment(String queue) {
        return List.of(running(queue, "con-1", "{0,1}"), running(queue, "con-1", "{4,5}"), running(queue, "con-2", "{2,3}"),
                running(queue, "con-2", "{6,7}"));
    }

    /** An 8-GPU gang of this model that waited a month when it was bound yesterday: the shape the pass makes room for. */
    private void anEightGpuGangWaitedLong() {
        UUID past = UUID.randomUUID();
        started.add(past);
        db.execute("insert into gang_wait (job_id, shape, waited_ms, bound_at, spec) values (?::uuid, ?, ?, now() - interval '1 day', ?)",
                past.toString(), "1x8 [" + MODEL + "]", Duration.ofDays(30).toMillis(), EventCodec.toJson(spec(past, 8, false)));
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
                db.queryLong("select count(*) from node where name in ('con-1', 'con-2') and not removed") == 2);
    }

    @AfterEach
    void cancelAll() throws Exception {
        try (TestNats nats = TestNats.connect(natsUrl)) {
            for (UUID id : started) {
                nats.publish(EventEnvelope.of(Subjects.JOBS_CANCELLED, id.toString(), new JobCancelled(id, "consolidation-test", "ann", Instant.now())));
            }
        }
        await().atMost(Duration.ofSeconds(60)).until(() -> started.stream().allMatch(id ->
                db.queryLong("select count(*) from running_job where job_id = ?::uuid", id.toString())
                        + db.queryLong("select count(*) from pending_job where job_id = ?::uuid", id.toString()) == 0));
        // this test's moves and waits must not count against the other tests' budgets and shapes
        for (UUID id : started) {
            db.execute("delete from job_migration where job_id = ?::uuid", id.toString());
            db.execute("delete from gang_wait where job_id = ?::uuid", id.toString());
        }
        started.clear();
    }

    /** A pass as if the clock showed {@code wallClock}; tried again while a window holds the planner. */
    private ScheduledConsolidation.Pass pass(ZonedDateTime wallClock) {
        AtomicReference<ScheduledConsolidation.Pass> result = new AtomicReference<>();
        await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(200)).until(() -> {
            ScheduledConsolidation.Pass p = once(wallClock);
            result.set(p);
            return !p.reason().startsWith("a window was planning");
        });
        return result.get();
    }

    private ScheduledConsolidation.Pass once(ZonedDateTime wallClock) {
        try {
            return VertxContextSupport.subscribeAndAwait(() -> consolidation.run(Instant.now(), wallClock));
        } catch (Throwable e) {
            throw new IllegalStateException("consolidation pass failed", e);
        }
    }

    private long outbox(String subject, UUID jobId) {
        return db.queryLong("select count(*) from outbox_event where subject = ? and subject_id = ?", subject, jobId.toString());
    }

    private String nodesOf(UUID jobId) {
        return db.queryString("select string_agg(distinct node, ',') from allocation where job_id = ?::uuid", jobId.toString());
    }

    private long toldToStop(List<UUID> jobs) {
        return jobs.stream().mapToLong(id -> db.queryLong("select count(*) from running_job where job_id = ?::uuid "
                + "and (migration_targets is not null or evicting_until is not null)", id.toString())
                + db.queryLong("select count(*) from job_migration where job_id = ?::uuid", id.toString())).sum();
    }

    @Test
    void atTheConfiguredHoursTwoMovesFreeAWholeNodeForTheShapeThatWaited() {
        List<UUID> small = fragment();
        anEightGpuGangWaitedLong();
        double migratedBefore = registry.get("gantry.placement.jobs.migrated").counter().count();

        ScheduledConsolidation.Pass pass = pass(AT_THREE);
        assertThat(pass.moves()).as(pass.reason()).isEqualTo(2);
        assertThat(pass.reason()).contains("room for 1x8 GPUs [" + MODEL + "]");

        // the grace over (1 s, simulated), both jobs moved as new attempts, and one node holds nothing
        await().atMost(Duration.ofSeconds(60)).until(() -> small.stream().mapToLong(id -> db.queryLong(
                "select count(*) from job_migration where job_id = ?::uuid and outcome = 'moved'", id.toString())).sum() == 2);
        List<String> busy = small.stream().map(this::nodesOf).distinct().toList();
        assertThat(busy).as("every job still runs, all on one node").hasSize(1);
        String freed = NODES.stream().filter(n -> !busy.contains(n)).findFirst().orElseThrow();
        assertThat(db.queryLong("select count(*) from allocation where node = ?", freed)).as(freed + " is free").isZero();
        List<UUID> moved = small.stream().filter(id -> outbox(Subjects.PLACEMENTS_MIGRATED, id) > 0).toList();
        assertThat(moved).hasSize(2);
        for (UUID id : moved) {
            assertThat(db.queryString("select string_agg(envelope, ' ') from outbox_event where subject = ? and subject_id = ?",
                    Subjects.PLACEMENTS_MIGRATED, id.toString())).contains("\"phase\":\"stopping\"").contains("\"phase\":\"moved\"")
                    .contains("scheduled consolidation, room for 1x8 GPUs");
        }
        assertThat(registry.get("gantry.placement.jobs.migrated").counter().count() - migratedBefore).isEqualTo(2.0);
        assertThat(small.stream().mapToLong(id -> outbox(Subjects.PLACEMENTS_PREEMPTED, id) + outbox(Subjects.PLACEMENTS_REQUEUED, id)).sum())
                .as("nobody preempted or requeued").isZero();

        // the room is there now: the next pass moves nobody
        ScheduledConsolidation.Pass again = pass(AT_THREE);
        assertThat(again.moves()).as(again.reason()).isZero();
        assertThat(again.reason()).contains("1x8 GPUs [" + MODEL + "]: room already");
    }

    @Test
    void outsideTheHoursNothingMoves() {
        List<UUID> small = fragment();
        anEightGpuGangWaitedLong();
        List<String> where = small.stream().map(this::nodesOf).toList();
        ScheduledConsolidation.Pass pass = pass(AT_NOON);
        assertThat(pass.moves()).isZero();
        assertThat(pass.reason()).startsWith("outside the consolidation hours 01:00-05:00");
        assertThat(toldToStop(small)).as("nobody told to stop").isZero();
        assertThat(small.stream().map(this::nodesOf).toList()).isEqualTo(where);
    }

    @Test
    void withTheHoursMovesSpentNothingMoves() {
        List<UUID> small = fragment();
        anEightGpuGangWaitedLong();
        // the cluster's 6 moves of the hour (gantry.placement.migration.max-per-hour), spent by other jobs
        List<UUID> others = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            UUID other = UUID.randomUUID();
            others.add(other);
            started.add(other);
            db.execute("insert into job_migration (job_id, queue, from_nodes, to_nodes, started_at, finished_at, outcome) "
                    + "values (?::uuid, 'elsewhere', 'a', 'b', now() - interval '10 minutes', now() - interval '9 minutes', 'moved')",
                    other.toString());
        }
        ScheduledConsolidation.Pass pass = pass(AT_THREE);
        assertThat(pass.moves()).isZero();
        assertThat(pass.reason()).startsWith("the disruption budget allows no move now");
        assertThat(toldToStop(small)).as("nobody told to stop").isZero();
    }

    @Test
    void movesTheQueuesHourCannotAffordAreNotRecordedAndNobodyMoves() {
        // gantry.placement.migration.queue-limits (test profile): migration-tight=1, and freeing a node takes two moves
        List<UUID> small = fragment("migration-tight");
        anEightGpuGangWaitedLong();
        ScheduledConsolidation.Pass pass = pass(AT_THREE);
        assertThat(pass.moves()).isZero();
        assertThat(pass.reason()).contains("room for 1x8 GPUs").contains("not recorded: the disruption budget refused them");
        assertThat(toldToStop(small)).as("all or none: nobody told to stop").isZero();
    }

    @Test
    void aBoundGangOfEightGpusLeavesItsWait() throws Exception {
        UUID wide = UUID.randomUUID();
        started.add(wide);
        try (TestNats nats = TestNats.connect(natsUrl)) {
            nats.publish(EventEnvelope.of(Subjects.JOBS_QUEUED, wide.toString(), spec(wide, 8, false)));
        }
        await().atMost(Duration.ofSeconds(60)).until(() -> outbox(Subjects.PLACEMENTS_BOUND, wide) == 1);
        await().atMost(Duration.ofSeconds(10)).until(() -> db.queryLong("select count(*) from gang_wait where job_id = ?::uuid",
                wide.toString()) == 1);
        assertThat(db.queryString("select shape from gang_wait where job_id = ?::uuid", wide.toString())).isEqualTo("1x8 [" + MODEL + "]");
        assertThat(db.queryLong("select waited_ms from gang_wait where job_id = ?::uuid", wide.toString()))
                .as("submitted an hour before it was bound").isGreaterThanOrEqualTo(Duration.ofMinutes(59).toMillis());
    }
}
