package dev.gantry.kit.outbox;

import dev.gantry.contracts.events.Subjects;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkiverse.reactive.messaging.nats.jetstream.client.api.PublishMessageMetadata;
import io.quarkus.hibernate.reactive.panache.Panache;
import io.quarkus.scheduler.Scheduled;
import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;
import io.smallrye.reactive.messaging.MutinyEmitter;
import jakarta.enterprise.context.ApplicationScoped;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.eclipse.microprofile.reactive.messaging.Channel;
import org.eclipse.microprofile.reactive.messaging.Message;
import org.eclipse.microprofile.reactive.messaging.Metadata;
import org.jboss.logging.Logger;

/**
 * Publishes committed outbox rows to NATS JetStream, oldest first, and marks them published once
 * the broker has acknowledged them. The JetStream message id is the event id, so a row sent twice
 * (a crash between the broker's ack and our update) is dropped by the stream's duplicate window,
 * and consumers are idempotent by event id besides.
 */
@ApplicationScoped
public class OutboxRelay {

    private static final Logger LOG = Logger.getLogger(OutboxRelay.class);

    private final Map<String, MutinyEmitter<byte[]>> emitterByStream;
    private final int batchSize;
    private final Counter published;
    private final Counter failed;

    public OutboxRelay(@Channel("jobs-out") MutinyEmitter<byte[]> jobs,
            @Channel("nodes-out") MutinyEmitter<byte[]> nodes,
            @Channel("quota-out") MutinyEmitter<byte[]> quota,
            @Channel("placements-out") MutinyEmitter<byte[]> placements,
            @ConfigProperty(name = "gantry.outbox.batch-size", defaultValue = "100") int batchSize,
            MeterRegistry registry) {
        this.emitterByStream = Map.of(
                Subjects.JOBS_STREAM, jobs,
                Subjects.NODES_STREAM, nodes,
                Subjects.QUOTA_STREAM, quota,
                Subjects.PLACEMENTS_STREAM, placements);
        this.batchSize = batchSize;
        this.published = registry.counter("gantry.outbox.published");
        this.failed = registry.counter("gantry.outbox.publish.failures");
    }

    @Scheduled(every = "${gantry.outbox.poll-interval:1s}", concurrentExecution = Scheduled.ConcurrentExecution.SKIP,
            skipExecutionIf = Scheduled.ApplicationNotRunning.class)
    Uni<Void> relay() {
        return publishPending().replaceWithVoid();
    }

    /** Publishes what is pending now; returns how many rows went out. Stops at the first failure to keep order. */
    public Uni<Integer> publishPending() {
        return Panache.withSession(() -> OutboxEvent.<OutboxEvent>find("publishedAt is null order by id")
                        .page(0, batchSize).list())
                .onItem().transformToUni(this::publishInOrder);
    }

    private Uni<Integer> publishInOrder(List<OutboxEvent> rows) {
        if (rows.isEmpty()) {
            return Uni.createFrom().item(0);
        }
        return Multi.createFrom().iterable(rows)
                .onItem().transformToUniAndConcatenate(this::publishOne)
                .collect().asList()
                .map(List::size)
                .onFailure().recoverWithItem(e -> 0);
    }

    private Uni<OutboxEvent> publishOne(OutboxEvent row) {
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
                .onItem().transformToUni(ignored -> markPublished(row.id))
                .onFailure().call(e -> recordFailure(row.id, e))
                .replaceWith(row);
    }

    private Uni<Void> markPublished(Long id) {
        published.increment();
        return Panache.withTransaction(() -> OutboxEvent.update("publishedAt = ?1 where id = ?2", Instant.now(), id))
                .replaceWithVoid();
    }

    private Uni<Void> recordFailure(Long id, Throwable e) {
        failed.increment();
        LOG.warnf("outbox event %d not published yet (will retry): %s", id, e.toString());
        return Panache.withTransaction(() -> OutboxEvent.update("attempts = attempts + 1, lastError = ?1 where id = ?2",
                String.valueOf(e.getMessage()), id)).replaceWithVoid();
    }
}
