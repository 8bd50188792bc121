package dev.gantry.placement.window;

import static org.assertj.core.api.Assertions.assertThat;

import dev.gantry.contracts.events.EventCodec;
import dev.gantry.contracts.events.Subjects;
import dev.gantry.contracts.jobs.JobQueued;
import dev.gantry.contracts.nodes.NodeInfo;
import dev.gantry.placement.engine.domain.Placement;
import dev.gantry.placement.engine.domain.Plan;
import dev.gantry.placement.engine.domain.Preemption;
import dev.gantry.placement.engine.domain.TaskPlacement;
import dev.gantry.testing.TestDatabase;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.vertx.VertxContextSupport;
import jakarta.inject.Inject;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The binder applies a plan of several jobs against the real PostgreSQL: each gang is written
 * whole or not at all, a gang whose GPUs a gang earlier in the same plan took is skipped (not
 * double-booked), a job that is no longer pending or running is passed over without holding back
 * the others, and victims return to the line with their submission times. The nodes and jobs are
 * this test's own: a GPU model no other test asks for and a taint nobody tolerates keep the
 * running windows off them.
 */
@QuarkusTest
class BinderTest {

    private static final String MODEL = "BINDER-TEST";
    private static final List<String> NODES = List.of("binder-x", "binder-y");

    @Inject
    TestDatabase db;

    @Inject
    Binder binder;

    @BeforeEach
    void nodes() {
        for (String name : NODES) {
            NodeInfo info = new NodeInfo(name, MODEL, 8, List.of(), List.of(), false, 64_000, 256_000,
                    new NodeInfo.Topology("z8", "s8", "l8"), null, Map.of(), List.of(new NodeInfo.Taint("gantry.dev/test", "binder", "NoSchedule")),
                    true, NodeInfo.Health.READY, 16_384, null, 0, false, Instant.now());
            db.execute("insert into node (name, info, snapshot_version, removed, updated_at) values (?, ?, 1, false, now()) "
                    + "on conflict (name) do update set info = excluded.info, removed = false", name, EventCodec.toJson(info));
        }
    }

    @AfterEach
    void cleanUp() {
        db.execute("delete from job_preemption where job_id in (select job_id from running_job where spec like '%" + MODEL + "%' "
                + "union select job_id from pending_job where spec like '%" + MODEL + "%')");
        db.execute("delete from allocation where node in ('binder-x', 'binder-y')");
        db.execute("delete from running_job where spec like '%" + MODEL + "%'");
        db.execute("delete from pending_job where spec like '%" + MODEL + "%'");
        db.execute("delete from node where name in ('binder-x', 'binder-y')");
    }

    private static JobQueued job(UUID id, int tasks, Instant submittedAt, boolean checkpointable) {
        // runs for hours under the test's speed-up: the executor does not complete it while the test looks
        return new JobQueued(id, "batch-" + id.toString().substring(0, 8), "binder-test", "bob", 0, submittedAt, null,
                List.of(new JobQueued.TaskGroup("worker", tasks, 1, null, 1000, 4000)), List.of(MODEL), null, null, false, Map.of(),
                List.of(), true, checkpointable, 1_000_000L);
    }

    private UUID pending(int tasks, Instant submittedAt) {
        return pending(tasks, submittedAt, false);
    }

    private UUID pending(int tasks, Instant submittedAt, boolean checkpointable) {
        UUID id = UUID.randomUUID();
        JobQueued spec = job(id, tasks, submittedAt, checkpointable);
        db.execute("insert into pending_job (job_id, name, queue, priority, total_gpus, spec, submitted_at, received_at) "
                + "values (?::uuid, ?, ?, 0, ?, ?, ?::timestamptz, now())", id.toString(), spec.name(), spec.queue(), tasks,
                EventCodec.toJson(spec), submittedAt.toString());
        return id;
    }

    private static TaskPlacement task(int i, String node, int gpu) {
        return new TaskPlacement("worker-" + i, node, List.of(gpu), null);
    }

    private int apply(List<Placement> placements, List<Preemption> preemptions) throws Throwable {
        Plan plan = new Plan(Plan.FORMAT, "binder-test", placements, preemptions, List.of(), List.of(), 0, Map.of());
        Map<String, String> models = Map.of("binder-x", MODEL, "binder-y", MODEL);
        return VertxContextSupport.subscribeAndAwait(() -> binder.apply(plan, models));
    }

    private long count(String sql, UUID id) {
        return db.queryLong(sql, id.toString());
    }

    private long outbox(String subject, UUID id) {
        return db.queryLong("select count(*) from outbox_event where subject = ? and subject_id = ?", subject, id.toString());
    }

    @Test
    void aGangCollidingWithAnEarlierGangOfThePlanIsSkippedWholeAndTheOthersAreBound() throws Throwable {
        Instant now = Instant.now().truncatedTo(ChronoUnit.MILLIS);
        UUID first = pending(2, now);
        UUID colliding = pending(2, now);
        UUID third = pending(1, now);
        UUID gone = UUID.randomUUID(); // cancelled while the window planned: no pending row

        int bound = apply(List.of(
                new Placement(first.toString(), List.of(task(0, "binder-x", 0), task(1, "binder-y", 0))),
                // its second task wants binder-x GPU 0, which the first gang of the same plan took
                new Placement(colliding.toString(), List.of(task(0, "binder-y", 3), task(1, "binder-x", 0))),
                new Placement(gone.toString(), List.of(task(0, "binder-y", 6))),
                new Placement(third.toString(), List.of(task(0, "binder-y", 5)))), List.of());

        assertThat(bound).isEqualTo(2);
        assertThat(count("select count(*) from allocation where job_id = ?::uuid", first)).isEqualTo(2);
        assertThat(count("select count(*) from allocation where job_id = ?::uuid", third)).isEqualTo(1);
        assertThat(count("select count(*) from allocation where job_id = ?::uuid", colliding))
                .as("no task of the colliding gang is written, not even the one on a free GPU").isZero();
        assertThat(count("select count(*) from pending_job where job_id = ?::uuid", colliding)).isEqualTo(1);
        assertThat(count("select count(*) from allocation where job_id = ?::uuid", gone)).isZero();
        assertThat(db.queryLong("select count(*) from allocation where node = 'binder-x' and 0 = any(gpu_indices)"))
                .as("binder-x GPU 0 held once").isEqualTo(1);
        assertThat(count("select count(*) from running_job where job_id = ?::uuid", first)).isEqualTo(1);
        assertThat(count("select count(*) from pending_job where job_id = ?::uuid", first)).isZero();
        assertThat(outbox(Subjects.PLACEMENTS_BOUND, first)).isEqualTo(1);
        assertThat(outbox(Subjects.PLACEMENTS_BOUND, third)).isEqualTo(1);
        assertThat(outbox(Subjects.PLACEMENTS_BOUND, colliding)).isZero();
    }

    /**
     * A job cancelled while the window that placed it records its plan: the cancellation has taken
     * the pending row (not committed yet) when the window reaches it. Whichever commits second must
     * see the other: the window binds the job only if it is still pending when the cancellation is
     * done, and binds the rest of its plan either way.
     */
    @Test
    void aJobWhoseCancellationHoldsItsPendingRowIsNotBoundAndThePlanGoesOn() throws Throwable {
        Instant now = Instant.now().truncatedTo(ChronoUnit.MILLIS);
        UUID cancelled = pending(1, now);
        UUID other = pending(1, now);
        java.util.concurrent.CompletableFuture<Integer> window;
        try (TestDatabase.OpenTransaction cancellation = db.begin()) {
            cancellation.execute("delete from pending_job where job_id = ?::uuid", cancelled.toString());
            cancellation.execute("insert into ended_job (job_id, ended_at, how) values (?::uuid, now(), 'cancelled')", cancelled.toString());
            window = java.util.concurrent.CompletableFuture.supplyAsync(() -> {
                try {
                    return apply(List.of(new Placement(cancelled.toString(), List.of(task(0, "binder-x", 0))),
                            new Placement(other.toString(), List.of(task(0, "binder-x", 1)))), List.of());
                } catch (Throwable e) {
                    throw new IllegalStateException(e);
                }
            });
            org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(30)).untilAsserted(() -> assertThat(db.queryLong(
                    "select count(*) from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'"))
                    .as("the window waiting for the cancellation's row").isPositive());
            cancellation.commit();
        }
        int bound = window.get(30, java.util.concurrent.TimeUnit.SECONDS);

        assertThat(count("select count(*) from running_job where job_id = ?::uuid", cancelled)).as("the cancelled job bound").isZero();
        assertThat(count("select count(*) from allocation where job_id = ?::uuid", cancelled)).isZero();
        assertThat(outbox(Subjects.PLACEMENTS_BOUND, cancelled)).isZero();
        assertThat(bound).isEqualTo(1);
        assertThat(count("select count(*) from running_job where job_id = ?::uuid", other)).isEqualTo(1);
    }

    @Test
    void theVictimsOfOnePlanAreRequeuedWithTheirSubmissionTimes() throws Throwable {
        Instant earlier = Instant.now().minusSeconds(3600).truncatedTo(ChronoUnit.MILLIS);
        UUID a = pending(1, earlier);
        UUID b = pending(2, earlier);
        assertThat(apply(List.of(new Placement(a.toString(), List.of(task(0, "binder-x", 2))),
                new Placement(b.toString(), List.of(task(0, "binder-x", 3), task(1, "binder-y", 3)))), List.of())).isEqualTo(2);
        UUID notRunning = UUID.randomUUID();

        apply(List.of(), List.of(new Preemption(a.toString(), "test: make room"), new Preemption(notRunning.toString(), "test: gone"),
                new Preemption(b.toString(), "test: make room")));

        for (UUID victim : List.of(a, b)) {
            assertThat(count("select count(*) from allocation where job_id = ?::uuid", victim)).isZero();
            assertThat(count("select count(*) from running_job where job_id = ?::uuid", victim)).isZero();
            assertThat(db.queryLong("select (extract(epoch from submitted_at) * 1000)::bigint from pending_job where job_id = ?::uuid",
                    victim.toString())).as("back in line with its original submission time").isEqualTo(earlier.toEpochMilli());
            assertThat(outbox(Subjects.PLACEMENTS_PREEMPTED, victim)).isEqualTo(1);
        }
        assertThat(outbox(Subjects.PLACEMENTS_PREEMPTED, notRunning)).isZero();
    }

    @Test
    void aPlansVictimsAreToldReleasedOrSparedEachByItsOwnRules() throws Throwable {
        Instant earlier = Instant.now().minusSeconds(3600).truncatedTo(ChronoUnit.MILLIS);
        UUID checkpointing = pending(1, earlier, true);
        UUID plain = pending(1, earlier);
        UUID protectedOne = pending(1, earlier);
        UUID preemptedBefore = pending(1, earlier);
        db.execute("insert into job_preemption (job_id, last_preempted_at, times) values (?::uuid, now() - interval '1 hour', 2)",
                preemptedBefore.toString());
        assertThat(apply(List.of(new Placement(checkpointing.toString(), List.of(task(0, "binder-x", 4))),
                new Placement(plain.toString(), List.of(task(0, "binder-x", 5))),
                new Placement(protectedOne.toString(), List.of(task(0, "binder-x", 6))),
                new Placement(preemptedBefore.toString(), List.of(task(0, "binder-x", 7)))), List.of())).isEqualTo(4);
        assertThat(db.queryString("select protected_until::text from running_job where job_id = ?::uuid", preemptedBefore.toString()))
                .as("placed again after a preemption: protected").isNotNull();
        assertThat(db.queryString("select protected_until::text from running_job where job_id = ?::uuid", plain.toString())).isNull();
        db.execute("update running_job set protected_until = now() + interval '1 hour' where job_id = ?::uuid", protectedOne.toString());

        apply(List.of(), List.of(new Preemption(checkpointing.toString(), "test: make room"), new Preemption(plain.toString(), "test: make room"),
                new Preemption(protectedOne.toString(), "test: make room"), new Preemption(plain.toString(), "test: named twice")));

        // told first: keeps its GPUs until the grace period ends, the event says so
        assertThat(count("select count(*) from allocation where job_id = ?::uuid", checkpointing)).isEqualTo(1);
        assertThat(count("select count(*) from running_job where job_id = ?::uuid and evicting_until is not null", checkpointing)).isEqualTo(1);
        assertThat(db.queryLong("select count(*) from outbox_event where subject = ? and subject_id = ? and envelope like '%checkpoint grace%'",
                Subjects.PLACEMENTS_PREEMPTED, checkpointing.toString())).isEqualTo(1);
        // released at once, once although named twice
        assertThat(count("select count(*) from allocation where job_id = ?::uuid", plain)).isZero();
        assertThat(count("select count(*) from pending_job where job_id = ?::uuid", plain)).isEqualTo(1);
        assertThat(outbox(Subjects.PLACEMENTS_PREEMPTED, plain)).isEqualTo(1);
        assertThat(count("select times from job_preemption where job_id = ?::uuid", plain)).isEqualTo(1);
        // protected: untouched
        assertThat(count("select count(*) from allocation where job_id = ?::uuid", protectedOne)).isEqualTo(1);
        assertThat(count("select count(*) from running_job where job_id = ?::uuid and evicting_until is null", protectedOne)).isEqualTo(1);
        assertThat(outbox(Subjects.PLACEMENTS_PREEMPTED, protectedOne)).isZero();
        assertThat(count("select count(*) from job_preemption where job_id = ?::uuid", protectedOne)).isZero();
    }
}
