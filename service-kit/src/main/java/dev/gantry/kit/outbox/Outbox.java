package dev.gantry.kit.outbox;

import dev.gantry.contracts.events.EventCodec;
import dev.gantry.contracts.events.EventEnvelope;
import dev.gantry.contracts.events.Subjects;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Instant;

/** Appends events to the outbox. Call it inside the transaction that makes the change. */
@ApplicationScoped
public class Outbox {

    public <P> Uni<EventEnvelope<P>> append(String subject, String subjectId, P payload) {
        if (!Subjects.ALL.contains(subject)) {
            throw new IllegalArgumentException("unknown subject " + subject);
        }
        EventEnvelope<P> envelope = EventEnvelope.of(subject, subjectId, payload);
        OutboxEvent row = new OutboxEvent();
        row.eventId = envelope.eventId();
        row.subject = subject;
        row.subjectId = subjectId;
        row.envelope = EventCodec.encode(envelope);
        row.createdAt = Instant.now();
        return row.persist().replaceWith(envelope);
    }
}
