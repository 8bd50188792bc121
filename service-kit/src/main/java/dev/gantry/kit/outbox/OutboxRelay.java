package dev.gantry.kit.outbox;

import dev.gantry.contracts.events.Subjects;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkiverse.reactive.messaging.nats.jetstream.client.api.PublishMessageMetadata;
import io.quarkus.hibernate.reactive.panache.Panache;
import io.quarkus.scheduler.Scheduled;
import io.quarkus.vertx.core.runtime.context.VertxContextSafetyToggle;
import io.smallrye.common.vertx.VertxContext;
import io.smallrye.mutiny.Uni;
import io.smallrye.reactive.messaging.MutinyEmitter;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import jakarta.enterprise.context.ApplicationScoped;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.eclipse.microprofile.reactive.messaging.Channel;
import org.eclipse.microprofile.reactive.messaging.Message;
import org.eclipse.microprofile.reactive.messaging.Metadata;
import org.jboss.logging.Logger;

/**
 * Publishes committed outbox rows to NATS JetStream and marks them published once the broker has
 * acknowledged them. Order is kept where it matters: the rows of one aggregate (a job, a node, a
 * queue: subject and subject id) go out one after another in id order, and a failure holds back
 * only that aggregate's later rows; different aggregates are published at once and their acks
 * awaited together. A row that still fails after {@code gantry.outbox.max-attempts} tries is set
 * aside as a dead letter (metric, alert, {@link OutboxAdminResource}) so it never blocks the rest.
 * The JetStream message id is the event id, so a row sent twice (a crash between the broker's ack
 * and our update) is dropped by the stream's duplicate window, and consumers are idempotent besides.
 *
 * <p>Besides its poll ({@code gantry.outbox.poll-interval}, 1 s: the scheduler's floor), the relay is
 * woken by every append ({@link #wake}): it then looks for pending rows every {@code
 * gantry.outbox.wake-delay} (10 ms) until {@code gantry.outbox.wake-linger} (250 ms) have passed since
 * the last append, so a row goes out milliseconds after its transaction commits (an append is made
 * before the commit, hence the lingering). The poll and the wake-ups never drain at the same time.
 */
@ApplicationScoped
public class OutboxRelay {

    private static final Logger LOG = Logger.getLogger(OutboxRelay.class);

    /** What one aggregate's rows came to in a pass: the ids published, and the row that failed (if one did). */
    private record Lane(List<Long> published, OutboxEvent failed, Throwable error) {
    }

    private static final int MAX_PASSES_PER_TICK = 10;

    private final Map<String, MutinyEmitter<byte[]>> emitterByStream;
    private final int batchSize;
    private final int maxAttempts;
    private final Counter published;
    private final Counter failed;
    private final Counter deadLettered;
    private final AtomicLong deadLetters = new AtomicLong();
    private final AtomicLong oldestPendingMillis = new AtomicLong();
    /** A drain is under way (from the poll or a wake-up): the other waits. */
    private final AtomicBoolean draining = new AtomicBoolean();
    /** The wake-up loop is scheduled or running. */
    private final AtomicBoolean woken = new AtomicBoolean();
    private volatile long lastWakeNanos;
    private final Vertx vertx;
    private final long wakeDelayMillis;
    private final long wakeLingerNanos;
    private final Counter wakeDrains;

    public OutboxRelay(@Channel("jobs-out") MutinyEmitter<byte[]> jobs,
            @Channel("nodes-out") MutinyEmitter<byte[]> nodes,
            @Channel("quota-out") MutinyEmitter<byte[]> quota,
            @Channel("placements-out") MutinyEmitter<byte[]> placements,
            @ConfigProperty(name = "gantry.outbox.batch-size", defaultValue = "100") int batchSize,
            @ConfigProperty(name = "gantry.outbox.max-attempts", defaultValue = "10") int maxAttempts,
            @ConfigProperty(name = "gantry.outbox.wake-delay", defaultValue = "10ms") Duration wakeDelay,
            @ConfigProperty(name = "gantry.outbox.wake-linger", defaultValue = "250ms") Duration wakeLinger,
            MeterRegistry registry, Vertx vertx) {
        this.vertx = vertx;
        this.wakeDelayMillis = Math.max(1, wakeDelay.toMillis());
        this.wakeLingerNanos = wakeLinger.toNanos();
        this.wakeDrains = registry.counter("gantry.outbox.wake.drains");
        this.emitterByStream = Map.of(
                Subjects.JOBS_STREAM, jobs,
                Subjects.NODES_STREAM, nodes,
                Subjects.QUOTA_STREAM, quota,
                Subjects.PLACEMENTS_STREAM, placements);
        this.batchSize = batchSize;
        this.maxAttempts = maxAttempts;
        this.published = registry.counter("gantry.outbox.published");
        this.failed = registry.counter("gantry.outbox.publish.failures");
        this.deadLettered = registry.counter("gantry.outbox.dead.lettered");
        Gauge.builder("gantry.outbox.dead.letters", deadLetters, AtomicLong::get)
                .description("outbox rows set aside after too many failed publishes, waiting for an admin").register(registry);
        Gauge.builder("gantry.outbox.backlog.age.seconds", oldestPendingMillis, v -> v.get() / 1000.0)
                .description("age of the oldest outbox row not yet published (0: none)").register(registry);
    }

    @Scheduled(every = "${gantry.outbox.poll-interval:1s}", concurrentExecution = Scheduled.ConcurrentExecution.SKIP,
            skipExecutionIf = Scheduled.ApplicationNotRunning.class)
    Uni<Void> relay() {
        if (!draining.compareAndSet(false, true)) {
            return Uni.createFrom().voidItem(); // the wake-up loop is draining
        }
        return drain(MAX_PASSES_PER_TICK).eventually(() -> draining.set(false)).chain(this::refreshGauges).replaceWithVoid();
    }

    /**
     * Rows were (or are about to be) committed: look for them now and for a short while. Cheap and
     * callable from any thread, inside a transaction or after it.
     */
    public void wake() {
        lastWakeNanos = System.nanoTime();
        if (woken.compareAndSet(false, true)) {
            vertx.setTimer(wakeDelayMillis, id -> wakeLoop());
        }
    }

    /** One drain on a fresh safe context (Hibernate Reactive needs one), then again while appends keep coming. */
    private void wakeLoop() {
        if (!draining.compareAndSet(false, true)) {
            vertx.setTimer(wakeDelayMillis, id -> wakeLoop()); // the poll is draining: look again right after it
            return;
        }
        Context context = VertxContext.createNewDuplicatedContext(vertx.getOrCreateContext());
        VertxContextSafetyToggle.setContextSafe(context, true);
        context.runOnContext(ignored -> drain(MAX_PASSES_PER_TICK)
                .eventually(() -> draining.set(false))
                .subscribe().with(sent -> afterWakeDrain(), e -> {
                    LOG.debugf("outbox wake-up drain failed (the poll retries): %s", e);
                    afterWakeDrain();
                }));
    }

    private void afterWakeDrain() {
        wakeDrains.increment();
        if (System.nanoTime() - lastWakeNanos < wakeLingerNanos) {
            vertx.setTimer(wakeDelayMillis, id -> wakeLoop());
            return;
        }
        woken.set(false);
        // a wake() between the check above and this line found the loop still marked as running: take it over
        if (System.nanoTime() - lastWakeNanos < wakeLingerNanos && woken.compareAndSet(false, true)) {
            vertx.setTimer(wakeDelayMillis, id -> wakeLoop());
        }
    }

    /**
     * A burst goes out in one tick: pass after pass while passes come back full (before, one pass of
     * {@code batch-size} rows per poll capped a service at ~100 events/s), up to a bound so a tick ends.
     */
    Uni<Integer> drain(int passesLeft) {
        return publishPending().chain(sent -> sent < batchSize || passesLeft <= 1 ? Uni.createFrom().item(sent)
                : drain(passesLeft - 1).map(more -> sent + more));
    }

    /** Publishes what is pending now (one batch); returns how many rows went out. */
    public Uni<Integer> publishPending() {
        return Panache.withSession(() -> OutboxEvent.<OutboxEvent>find("publishedAt is null and deadLetteredAt is null order by id")
                        .page(0, batchSize).list())
                .onItem().transformToUni(this::publishBatch);
    }

    private Uni<Integer> publishBatch(List<OutboxEvent> rows) {
        if (rows.isEmpty()) {
            return Uni.createFrom().item(0);
        }
        Map<String, List<OutboxEvent>> lanes = new LinkedHashMap<>();
        for (OutboxEvent row : rows) {
            lanes.computeIfAbsent(row.subject + " " + row.subjectId, k -> new ArrayList<>()).add(row);
        }
        List<Uni<Lane>> sending = lanes.values().stream().map(this::publishLane).toList();
        // every lane recovers its own failure, so joining never fails; the database is written once, afterwards
        return Uni.join().all(sending).andFailFast().chain(this::record);
    }

    /** One aggregate's rows, one after another; the first failure holds back the rest until the next pass. */
    private Uni<Lane> publishLane(List<OutboxEvent> lane) {
        List<Long> sent = new ArrayList<>();
        Uni<Lane> chain = Uni.createFrom().nullItem();
        for (OutboxEvent row : lane) {
            chain = chain.chain(failure -> failure != null ? Uni.createFrom().item(failure)
                    : send(row).replaceWith(() -> {
                        sent.add(row.id);
                        return (Lane) null;
                    }).onFailure().recoverWithItem(e -> new Lane(sent, row, e)));
        }
        return chain.map(failure -> failure != null ? failure : new Lane(sent, null, null));
    }

    private Uni<Void> send(OutboxEvent row) {
        MutinyEmitter<byte[]> emitter = emitterByStream.get(Subjects.streamOf(row.subject));
        PublishMessageMetadata metadata = PublishMessageMetadata.builder()
                .stream(Subjects.streamOf(row.subject))
                .subject(row.subject)
                .messageId(row.eventId.toString())
                .headers(Map.of())
                .build();
        // bytes go on the wire as they are (a String would be JSON-quoted by the connector)
        return emitter.sendMessage(Message.of(row.envelope.getBytes(StandardCharsets.UTF_8), Metadata.of(metadata)))
                .ifNoItem().after(Duration.ofSeconds(10)).fail()
                .replaceWithVoid();
    }

    /** Marks what went out (one statement) and counts what did not, setting aside rows that failed too often. */
    private Uni<Integer> record(List<Lane> lanes) {
        List<Long> sent = lanes.stream().flatMap(l -> l.published().stream()).toList();
        List<Lane> failures = lanes.stream().filter(l -> l.failed() != null).toList();
        return Panache.withTransaction(() -> {
            Uni<Void> chain = sent.isEmpty() ? Uni.createFrom().voidItem()
                    : OutboxEvent.update("publishedAt = ?1 where id in ?2", Instant.now(), sent).replaceWithVoid();
            for (Lane lane : failures) {
                chain = chain.chain(() -> recordFailure(lane.failed(), lane.error()));
            }
            return chain;
        }).invoke(() -> published.increment(sent.size())).replaceWith(sent.size());
    }

    private Uni<Void> recordFailure(OutboxEvent row, Throwable e) {
        failed.increment();
        int attempts = row.attempts + 1;
        String error = String.valueOf(e.getMessage());
        if (attempts >= maxAttempts) {
            deadLettered.increment();
            LOG.errorf("outbox event %d (%s %s) set aside after %d failed publishes; the rest go on. Last error: %s",
                    row.id, row.subject, row.subjectId, attempts, error);
            return OutboxEvent.update("attempts = ?1, lastError = ?2, deadLetteredAt = ?3 where id = ?4",
                    attempts, error, Instant.now(), row.id).replaceWithVoid();
        }
        LOG.warnf("outbox event %d not published yet (attempt %d of %d, will retry): %s", row.id, attempts, maxAttempts, error);
        return OutboxEvent.update("attempts = ?1, lastError = ?2 where id = ?3", attempts, error, row.id).replaceWithVoid();
    }

    private Uni<Void> refreshGauges(int ignored) {
        return Panache.withSession(() -> Panache.getSession().chain(session -> session.createNativeQuery("""
                        select (select count(*) from outbox_event where dead_lettered_at is not null and published_at is null),
                               (select coalesce(extract(epoch from now() - min(created_at)) * 1000, 0)::bigint
                                  from outbox_event where published_at is null and dead_lettered_at is null)""", Object[].class)
                .getSingleResult()))
                .invoke(row -> {
                    deadLetters.set(((Number) row[0]).longValue());
                    oldestPendingMillis.set(((Number) row[1]).longValue());
                })
                .replaceWithVoid()
                .onFailure().recoverWithItem(e -> {
                    LOG.debugf("outbox gauges not refreshed: %s", e);
                    return null;
                });
    }
}
