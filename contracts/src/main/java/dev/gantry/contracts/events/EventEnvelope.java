package dev.gantry.contracts.events;

import java.time.Instant;
import java.util.Objects;
import java.util.UUID;

/**
 * What travels on every Gantry subject: a typed payload wrapped in the identity and time that
 * consumers need to stay idempotent ({@code eventId}) and to order or discard stale news
 * ({@code occurredAt}, {@code version}).
 *
 * @param eventId    unique per event; consumers store it and skip a redelivered duplicate
 * @param type       the event type, equal to the subject it is published on (e.g. {@code jobs.queued})
 * @param occurredAt when the producer committed the change
 * @param subjectId  the aggregate the event is about (job id, node name, queue name...)
 * @param version    schema version of the payload, so consumers can refuse what they cannot read
 * @param payload    the event body
 * @param sequence   the producer's order of its events (its outbox row id): of two events about the
 *                   same subject from one producer, the higher sequence is the later change, however
 *                   the broker delivered them; 0 when unknown (an event built outside an outbox)
 */
public record EventEnvelope<P>(UUID eventId, String type, Instant occurredAt, String subjectId, int version, P payload,
        long sequence) {

    public static final int CURRENT_VERSION = 1;

    public EventEnvelope {
        Objects.requireNonNull(eventId, "eventId");
        Objects.requireNonNull(type, "type");
        Objects.requireNonNull(occurredAt, "occurredAt");
        Objects.requireNonNull(subjectId, "subjectId");
        Objects.requireNonNull(payload, "payload");
        if (sequence < 0) {
            throw new IllegalArgumentException("sequence must be >= 0, was " + sequence);
        }
        if (version < 1) {
            throw new IllegalArgumentException("version must be >= 1, was " + version);
        }
    }

    /** A new event with a fresh id, stamped now, at the current schema version, without a sequence. */
    public static <P> EventEnvelope<P> of(String type, String subjectId, P payload) {
        return of(type, subjectId, payload, 0);
    }

    /** A new event with a fresh id, stamped now, at the current schema version, in the producer's order. */
    public static <P> EventEnvelope<P> of(String type, String subjectId, P payload, long sequence) {
        return new EventEnvelope<>(UUID.randomUUID(), type, Instant.now(), subjectId, CURRENT_VERSION, payload, sequence);
    }
}
