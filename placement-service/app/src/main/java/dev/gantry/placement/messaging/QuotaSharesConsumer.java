package dev.gantry.placement.messaging;

import com.fasterxml.jackson.databind.JsonNode;
import dev.gantry.contracts.events.EventCodec;
import dev.gantry.contracts.events.EventEnvelope;
import dev.gantry.contracts.events.MalformedEventException;
import dev.gantry.contracts.events.Subjects;
import dev.gantry.contracts.quota.QuotaShares;
import dev.gantry.kit.inbox.ProcessedEvents;
import dev.gantry.placement.persistence.QuotaSharesRecord;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.hibernate.reactive.panache.Panache;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Instant;
import org.eclipse.microprofile.reactive.messaging.Incoming;
import org.jboss.logging.Logger;

/**
 * Keeps the latest {@code quota.shares} (queue tree, guarantees, capabilities) for the window's
 * scenario, on a durable consumer, idempotent by event id; shares older than the stored ones are dropped.
 */
@ApplicationScoped
public class QuotaSharesConsumer {

    private static final Logger LOG = Logger.getLogger(QuotaSharesConsumer.class);

    private final ProcessedEvents processed;
    private final Counter applied;
    private final Counter malformed;

    public QuotaSharesConsumer(ProcessedEvents processed, MeterRegistry registry) {
        this.processed = processed;
        this.applied = registry.counter("gantry.events.consumed", "stream", Subjects.QUOTA_STREAM, "outcome", "applied");
        this.malformed = registry.counter("gantry.events.consumed", "stream", Subjects.QUOTA_STREAM, "outcome", "malformed");
    }

    @Incoming("quota-in")
    public Uni<Void> onQuotaEvent(JsonNode event) {
        String type = event.path("type").asText("");
        if (!Subjects.QUOTA_SHARES.equals(type)) {
            return Uni.createFrom().voidItem();
        }
        EventEnvelope<QuotaShares> envelope;
        try {
            envelope = EventCodec.decode(event, QuotaShares.class);
        } catch (MalformedEventException e) {
            malformed.increment();
            LOG.errorf("dropping malformed %s event: %s", type, e.getMessage());
            return Uni.createFrom().voidItem();
        }
        QuotaShares shares = envelope.payload();
        if (shares.queues() == null) {
            malformed.increment();
            LOG.errorf("dropping quota.shares %s without queues", envelope.eventId());
            return Uni.createFrom().voidItem();
        }
        Instant computedAt = shares.computedAt() != null ? shares.computedAt() : envelope.occurredAt();
        return Panache.withTransaction(() -> processed.markFirstSeen(envelope.eventId(), envelope.type())
                .chain(first -> !first ? Uni.createFrom().voidItem()
                        : QuotaSharesRecord.<QuotaSharesRecord>findById(QuotaSharesRecord.ID).chain(existing -> {
                            if (existing != null && existing.computedAt.isAfter(computedAt)) {
                                return Uni.createFrom().voidItem();
                            }
                            applied.increment();
                            QuotaSharesRecord row = existing != null ? existing : new QuotaSharesRecord();
                            row.id = QuotaSharesRecord.ID;
                            row.shares = EventCodec.toJson(shares);
                            row.computedAt = computedAt;
                            row.updatedAt = Instant.now();
                            return row.persist().replaceWithVoid();
                        })))
                .onFailure().invoke(e -> LOG.warnf("quota.shares %s not applied (redelivered later): %s", envelope.eventId(), e.toString()));
    }
}
