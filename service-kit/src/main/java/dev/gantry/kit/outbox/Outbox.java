package dev.gantry.kit.outbox;

import dev.gantry.contracts.events.EventCodec;
import dev.gantry.contracts.events.EventEnvelope;
import dev.gantry.contracts.events.Subjects;
import io.quarkus.hibernate.reactive.panache.Panache;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import org.eclipse.microprofile.config.inject.ConfigProperty;

/**
 * Appends events to the outbox. Call it inside the transaction that makes the change. Each event
 * carries the row's id as its sequence, so consumers can tell a later change from an earlier one
 * that the broker delivered late.
 */
@ApplicationScoped
public class Outbox {

    private final long maxEventBytes;

    public Outbox(@ConfigProperty(name = "gantry.outbox.max-event-bytes", defaultValue = "1000000") long maxEventBytes) {
        this.maxEventBytes = maxEventBytes;
    }

    /**
     * Refuses, before anything is stored, an event the broker would never accept ({@link
     * EventTooLargeException}): a row that cannot be published would only be retried and set aside.
     */
    public <P> void requireFits(String subject, String subjectId, P payload) {
        requireFits(subject, EventCodec.encode(EventEnvelope.of(subject, subjectId, payload, Long.MAX_VALUE)));
    }

    private void requireFits(String subject, String encoded) {
        long bytes = encoded.getBytes(StandardCharsets.UTF_8).length;
        if (bytes > maxEventBytes) {
            throw new EventTooLargeException(subject, bytes, maxEventBytes);
        }
    }

    public <P> Uni<EventEnvelope<P>> append(String subject, String subjectId, P payload) {
        if (!Subjects.ALL.contains(subject)) {
            throw new IllegalArgumentException("unknown subject " + subject);
        }
        return nextId().chain(id -> {
            EventEnvelope<P> envelope = EventEnvelope.of(subject, subjectId, payload, id);
            String encoded = EventCodec.encode(envelope);
            requireFits(subject, encoded);
            OutboxEvent row = new OutboxEvent();
            row.id = id;
            row.eventId = envelope.eventId();
            row.subject = subject;
            row.subjectId = subjectId;
            row.envelope = encoded;
            row.createdAt = Instant.now();
            return row.persist().replaceWith(envelope);
        });
    }

    /** The row's id, which is also the event's sequence: the producer's order of its events. */
    private Uni<Long> nextId() {
        return Panache.getSession().chain(session -> session
                .createNativeQuery("select nextval(pg_get_serial_sequence('outbox_event', 'id'))", Long.class)
                .getSingleResult());
    }
}
