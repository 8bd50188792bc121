package dev.gantry.placement;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import dev.gantry.contracts.events.EventCodec;
import dev.gantry.contracts.events.EventEnvelope;
import dev.gantry.contracts.events.Subjects;
import dev.gantry.contracts.jobs.JobCancelled;
import dev.gantry.contracts.jobs.JobQueued;
import dev.gantry.kit.inbox.EventBatch;
import dev.gantry.kit.inbox.EventBatches;
import dev.gantry.placement.messaging.JobEventsConsumer;
import dev.gantry.placement.persistence.EndedJob;
import dev.gantry.testing.FreshTestConsumers;
import dev.gantry.testing.TestDatabase;
import dev.gantry.testing.TestNats;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.common.ResourceArg;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.vertx.VertxContextSupport;
import io.smallrye.mutiny.Uni;
import jakarta.inject.Inject;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.eclipse.microprofile.reactive.messaging.Message;
import org.junit.jupiter.api.Test;

/**
 * Placement's jobs consumer applies a burst in batches (issue 18 item 6: one transaction and one
 * synchronous ack per event held it to ~40 events/s), without giving up order, idempotency or
 * keeping a bad event to itself.
 */
@QuarkusTestResource(value = FreshTestConsumers.class, initArgs = @ResourceArg(name = "service", value = "placement"))
@QuarkusTest
class JobEventBatchesTest {

    @ConfigProperty(name = "gantry.nats.url")
    String natsUrl;

    @Inject
    TestDatabase db;

    @Inject
    JobEventsConsumer consumer;

    @Inject
    EventBatches batches;

    private static EventEnvelope<JobQueued> queued(UUID jobId) {
        JobQueued job = new JobQueued(jobId, "burst-" + jobId.toString().substring(0, 8), "normal", "alice", 100,
                Instant.now(), 1, List.of(new JobQueued.TaskGroup("worker", 1, 1, null, 1000, 4000)),
                List.of("A100-SXM4-80GB"), null, null, false, Map.of(), List.of(), true, true, 600L);
        return EventEnvelope.of(Subjects.JOBS_QUEUED, jobId.toString(), job);
    }

    private static EventEnvelope<JobCancelled> cancelled(UUID jobId) {
        return EventEnvelope.of(Subjects.JOBS_CANCELLED, jobId.toString(), new JobCancelled(jobId, "normal", "alice", Instant.now()));
    }

    private static JsonNode tree(EventEnvelope<?> envelope) throws Exception {
        return EventCodec.mapper().readTree(EventCodec.encode(envelope));
    }

    /** Messages that remember whether they were acked or nacked, as the broker would see it. */
    private static final class Outcomes {
        final Set<String> acked = ConcurrentHashMap.newKeySet();
        final Set<String> nacked = ConcurrentHashMap.newKeySet();

        <T> Message<T> message(String name, T payload) {
            return Message.of(payload, () -> {
                acked.add(name);
                return CompletableFuture.completedFuture(null);
            }, reason -> {
                nacked.add(name);
                return CompletableFuture.completedFuture(null);
            });
        }
    }

    @Test
    void aBurstIsStoredInFarFewerTransactionsThanEvents() throws Exception {
        List<UUID> jobs = new ArrayList<>();
        try (TestNats nats = TestNats.connect(natsUrl)) {
            for (int i = 0; i < 300; i++) {
                UUID jobId = UUID.randomUUID();
                jobs.add(jobId);
                nats.publish(queued(jobId));
            }
        }
        String ids = jobs.stream().map(id -> "'" + id + "'").collect(Collectors.joining(","));
        await().atMost(Duration.ofSeconds(60)).untilAsserted(() ->
                assertThat(db.queryLong("select count(*) from pending_job where job_id in (" + ids + ")")
                        + db.queryLong("select count(*) from running_job where job_id in (" + ids + ")")).isEqualTo(300));
        // rows a transaction inserted share its id (xmin): one per event before, a handful per burst now
        long transactions = db.queryLong("select count(distinct xmin::text) from pending_job where job_id in (" + ids + ")");
        long stored = db.queryLong("select count(*) from pending_job where job_id in (" + ids + ")");
        assertThat(stored).as("jobs still pending (the rest were bound meanwhile)").isPositive();
        assertThat(transactions).as("transactions that stored %d of the jobs", stored).isLessThanOrEqualTo(Math.max(1, stored / 5));
    }

    @Test
    void aCancellationInTheSameBatchAsItsJobLeavesNothingPendingWhicheverComesFirst() throws Throwable {
        UUID queuedFirst = UUID.randomUUID();
        UUID cancelledFirst = UUID.randomUUID();
        Outcomes outcomes = new Outcomes();
        EventBatch<JsonNode> batch = new EventBatch<>(List.of(
                outcomes.message("q1", tree(queued(queuedFirst))),
                outcomes.message("c1", tree(cancelled(queuedFirst))),
                outcomes.message("c2", tree(cancelled(cancelledFirst))),
                outcomes.message("q2", tree(queued(cancelledFirst)))));

        VertxContextSupport.subscribeAndAwait(() -> consumer.onJobEvents(batch));

        for (UUID job : List.of(queuedFirst, cancelledFirst)) {
            assertThat(db.queryLong("select count(*) from pending_job where job_id = ?::uuid", job.toString())).isZero();
            assertThat(db.queryLong("select count(*) from running_job where job_id = ?::uuid", job.toString())).isZero();
            assertThat(db.queryString("select how from ended_job where job_id = ?::uuid", job.toString())).isEqualTo("cancelled");
        }
        assertThat(outcomes.acked).containsExactlyInAnyOrder("q1", "c1", "c2", "q2");
        assertThat(outcomes.nacked).isEmpty();
    }

    /** A job no node of the test cluster has GPUs for, so it stays pending while the test looks. */
    private static EventEnvelope<JobQueued> unplaceable(UUID jobId, String name) {
        JobQueued job = new JobQueued(jobId, name, "normal", "alice", 100, Instant.now(), 1,
                List.of(new JobQueued.TaskGroup("worker", 1, 1, null, 1000, 4000)), List.of("NO-SUCH-GPU"), null, null, false,
                Map.of(), List.of(), true, true, 600L);
        return EventEnvelope.of(Subjects.JOBS_QUEUED, jobId.toString(), job);
    }

    @Test
    void aRunOfQueuedEventsStoredTogetherHasTheEffectOfStoringThemOneByOne() throws Throwable {
        UUID seen = UUID.randomUUID();
        UUID ended = UUID.randomUUID();
        UUID running = UUID.randomUUID();
        UUID twice = UUID.randomUUID();
        UUID cancelledBetween = UUID.randomUUID();
        UUID plain = UUID.randomUUID();
        EventEnvelope<JobQueued> seenBefore = unplaceable(seen, "seen");
        db.execute("insert into processed_event (event_id, type, processed_at) values (?::uuid, 'jobs.queued', now())",
                seenBefore.eventId().toString());
        db.execute("insert into ended_job (job_id, ended_at, how) values (?::uuid, now(), 'cancelled')", ended.toString());
        db.execute("insert into running_job (job_id, queue, priority, spec, submitted_at, bound_at, due_at) "
                + "values (?::uuid, 'normal', 100, '{}', now(), now(), now() + interval '1 day')", running.toString());
        Outcomes outcomes = new Outcomes();
        EventBatch<JsonNode> batch = new EventBatch<>(List.of(
                outcomes.message("seen", tree(seenBefore)),
                outcomes.message("ended", tree(unplaceable(ended, "ended"))),
                outcomes.message("running", tree(unplaceable(running, "running"))),
                outcomes.message("twice-1", tree(unplaceable(twice, "first"))),
                outcomes.message("between", tree(unplaceable(cancelledBetween, "between"))),
                outcomes.message("cancel", tree(cancelled(cancelledBetween))),
                outcomes.message("twice-2", tree(unplaceable(twice, "second"))),
                outcomes.message("plain", tree(unplaceable(plain, "plain")))));

        VertxContextSupport.subscribeAndAwait(() -> consumer.onJobEvents(batch));

        assertThat(outcomes.acked).hasSize(8);
        assertThat(outcomes.nacked).isEmpty();
        for (UUID skipped : List.of(seen, ended, running, cancelledBetween)) {
            assertThat(db.queryLong("select count(*) from pending_job where job_id = ?::uuid", skipped.toString())).as(skipped.toString()).isZero();
        }
        assertThat(db.queryString("select name from pending_job where job_id = ?::uuid", twice.toString())).isEqualTo("second");
        assertThat(db.queryString("select name from pending_job where job_id = ?::uuid", plain.toString())).isEqualTo("plain");
        assertThat(db.queryString("select how from ended_job where job_id = ?::uuid", cancelledBetween.toString())).isEqualTo("cancelled");
        // applied in the batch's one transaction, not one event at a time after it failed
        assertThat(db.queryLong("select count(distinct xmin::text) from pending_job where job_id in (?::uuid, ?::uuid)",
                twice.toString(), plain.toString())).isEqualTo(1);
        db.execute("delete from running_job where job_id = ?::uuid", running.toString());
        db.execute("delete from pending_job where job_id in (?::uuid, ?::uuid)", twice.toString(), plain.toString());
    }

    /**
     * A mass cancellation is applied by {@code CancelledJobsStore} (one statement for the run, one
     * for its events) instead of ~15 round trips a job; the effect must be that of one by one.
     */
    @Test
    void aRunOfCancellationsAppliedTogetherHasTheEffectOfApplyingThemOneByOne() throws Throwable {
        UUID pending = UUID.randomUUID();
        UUID running = UUID.randomUUID();
        UUID unknown = UUID.randomUUID();
        UUID completed = UUID.randomUUID();
        UUID seenJob = UUID.randomUUID();
        String node = "cancel-batch-" + running.toString().substring(0, 8);
        db.execute("insert into running_job (job_id, queue, priority, spec, submitted_at, bound_at, due_at) "
                + "values (?::uuid, 'normal', 100, '{}', now(), now(), now() + interval '1 day')", running.toString());
        db.execute("insert into allocation (job_id, task, node, gpu_indices, allocated_at) values (?::uuid, 'worker-0', ?, '{0,1}', now())",
                running.toString(), node);
        db.execute("insert into job_preemption (job_id, last_preempted_at, times) values (?::uuid, now(), 1)", running.toString());
        db.execute("insert into job_migration (job_id, queue, from_nodes, to_nodes, started_at) values (?::uuid, 'normal', 'a', 'b', now())",
                running.toString());
        db.execute("insert into ended_job (job_id, ended_at, how) values (?::uuid, now(), 'placements.completed')", completed.toString());
        EventEnvelope<JobCancelled> seenBefore = cancelled(seenJob);
        db.execute("insert into processed_event (event_id, type, processed_at) values (?::uuid, 'jobs.cancelled', now())",
                seenBefore.eventId().toString());
        EventEnvelope<JobCancelled> cancelRunning = cancelled(running);
        Outcomes outcomes = new Outcomes();
        EventBatch<JsonNode> batch = new EventBatch<>(List.of(
                outcomes.message("queued", tree(unplaceable(pending, "pending"))),
                outcomes.message("cancel-pending", tree(cancelled(pending))),
                outcomes.message("cancel-running", tree(cancelRunning)),
                outcomes.message("cancel-running-again", tree(cancelRunning)),
                outcomes.message("cancel-unknown", tree(cancelled(unknown))),
                outcomes.message("cancel-completed", tree(cancelled(completed))),
                outcomes.message("seen", tree(seenBefore))));

        VertxContextSupport.subscribeAndAwait(() -> consumer.onJobEvents(batch));

        assertThat(outcomes.acked).hasSize(7);
        assertThat(outcomes.nacked).isEmpty();
        assertThat(db.queryLong("select count(*) from pending_job where job_id = ?::uuid", pending.toString())).isZero();
        assertThat(db.queryLong("select count(*) from running_job where job_id = ?::uuid", running.toString())).isZero();
        assertThat(db.queryLong("select count(*) from allocation where job_id = ?::uuid", running.toString())).isZero();
        assertThat(db.queryLong("select coalesce(sum(used_milli), 0) from gpu_booking where node = ?", node))
                .as("the bookings follow the allocations").isZero();
        assertThat(db.queryLong("select count(*) from job_preemption where job_id = ?::uuid", running.toString())).isZero();
        assertThat(db.queryString("select outcome from job_migration where job_id = ?::uuid", running.toString())).isEqualTo("abandoned");
        for (UUID job : List.of(pending, running, unknown)) {
            assertThat(db.queryString("select how from ended_job where job_id = ?::uuid", job.toString())).as(job.toString()).isEqualTo("cancelled");
        }
        assertThat(db.queryString("select how from ended_job where job_id = ?::uuid", completed.toString()))
                .as("the first end is kept").isEqualTo("placements.completed");
        assertThat(db.queryLong("select count(*) from ended_job where job_id = ?::uuid", seenJob.toString()))
                .as("an event seen before changes nothing").isZero();
        // the running job's end, once, with its reason; nothing for the others
        assertThat(db.queryLong("select count(*) from outbox_event where subject = ? and subject_id = ?",
                Subjects.PLACEMENTS_COMPLETED, running.toString())).isEqualTo(1);
        assertThat(db.queryString("select envelope from outbox_event where subject = ? and subject_id = ?",
                Subjects.PLACEMENTS_COMPLETED, running.toString())).contains("\"reason\":\"cancelled\"").contains("\"queue\":\"normal\"");
        for (UUID job : List.of(pending, unknown, completed)) {
            assertThat(db.queryLong("select count(*) from outbox_event where subject = ? and subject_id = ?",
                    Subjects.PLACEMENTS_COMPLETED, job.toString())).isZero();
        }
        // the run's tombstones written by one statement of the batch's transaction
        assertThat(db.queryLong("select count(distinct xmin::text) from ended_job where job_id in (?::uuid, ?::uuid, ?::uuid)",
                pending.toString(), running.toString(), unknown.toString())).isEqualTo(1);
    }

    /**
     * Seen in the pipeline benchmark: 41 jobs cancelled while a window bound them stayed running in
     * placement for good. The run of cancellations read the running jobs as they were when its
     * statement began, waited for the window's transaction on the pending rows, and then found the
     * jobs neither pending (the window had taken them) nor running (its snapshot was older). Here
     * another transaction takes the job from pending to running and commits only while the
     * cancellations wait for it.
     */
    @Test
    void aRunOfCancellationsThatWaitsForAWindowBindingTheJobReleasesWhatTheWindowBound() throws Throwable {
        UUID job = UUID.randomUUID();
        UUID other = UUID.randomUUID();
        String node = "cancel-race-" + job.toString().substring(0, 8);
        Outcomes outcomes = new Outcomes();
        EventBatch<JsonNode> queued = new EventBatch<>(List.of(outcomes.message("queued", tree(unplaceable(job, "race")))));
        VertxContextSupport.subscribeAndAwait(() -> consumer.onJobEvents(queued));
        assertThat(db.queryLong("select count(*) from pending_job where job_id = ?::uuid", job.toString())).isEqualTo(1);

        CompletableFuture<Void> cancellations;
        try (TestDatabase.OpenTransaction window = db.begin()) {
            // what the binder writes for the job: out of pending, running with an allocation
            window.execute("delete from pending_job where job_id = ?::uuid", job.toString());
            window.execute("insert into running_job (job_id, queue, priority, spec, submitted_at, bound_at, due_at) "
                    + "values (?::uuid, 'normal', 100, '{}', now(), now(), now() + interval '1 day')", job.toString());
            window.execute("insert into allocation (job_id, task, node, gpu_indices, allocated_at) values (?::uuid, 'worker-0', ?, '{0}', now())",
                    job.toString(), node);
            EventBatch<JsonNode> cancels = new EventBatch<>(List.of(
                    outcomes.message("cancel", tree(cancelled(job))),
                    outcomes.message("cancel-other", tree(cancelled(other)))));
            cancellations = CompletableFuture.runAsync(() -> {
                try {
                    VertxContextSupport.subscribeAndAwait(() -> consumer.onJobEvents(cancels));
                } catch (Throwable e) {
                    throw new IllegalStateException(e);
                }
            });
            await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(db.queryLong(
                    "select count(*) from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'"))
                    .as("the cancellations waiting for the window's rows").isPositive());
            window.commit();
        }
        cancellations.get(30, java.util.concurrent.TimeUnit.SECONDS);

        assertThat(outcomes.acked).contains("cancel", "cancel-other");
        assertThat(db.queryLong("select count(*) from running_job where job_id = ?::uuid", job.toString()))
                .as("the cancelled job still running").isZero();
        assertThat(db.queryLong("select count(*) from allocation where job_id = ?::uuid", job.toString())).isZero();
        assertThat(db.queryLong("select count(*) from outbox_event where subject = ? and subject_id = ?",
                Subjects.PLACEMENTS_COMPLETED, job.toString())).as("its end told to admission and quota").isEqualTo(1);
        assertThat(db.queryString("select how from ended_job where job_id = ?::uuid", job.toString())).isEqualTo("cancelled");
    }

    @Test
    void anEventThatCannotBeAppliedIsNackedAloneAndTheOthersCommit() throws Throwable {
        UUID[] jobs = {UUID.randomUUID(), UUID.randomUUID(), UUID.randomUUID()};
        Outcomes outcomes = new Outcomes();
        EventBatch<String> batch = new EventBatch<>(List.of(
                outcomes.message("first", jobs[0].toString()),
                outcomes.message("poison", "poison"),
                outcomes.message("last", jobs[2].toString())));

        VertxContextSupport.subscribeAndAwait(() -> batches.apply("TEST", batch, payload -> payload.equals("poison")
                // the write happens, then the event fails: its transaction must roll back, the others' must not
                ? EndedJob.record(jobs[1], "poison").chain(() -> Uni.createFrom().failure(new IllegalStateException("cannot apply")))
                : EndedJob.record(UUID.fromString(payload), "batch")));

        assertThat(outcomes.acked).containsExactlyInAnyOrder("first", "last");
        assertThat(outcomes.nacked).containsExactly("poison");
        assertThat(db.queryLong("select count(*) from ended_job where job_id = ?::uuid", jobs[0].toString())).isEqualTo(1);
        assertThat(db.queryLong("select count(*) from ended_job where job_id = ?::uuid", jobs[1].toString())).isZero();
        assertThat(db.queryLong("select count(*) from ended_job where job_id = ?::uuid", jobs[2].toString())).isEqualTo(1);
    }
}
