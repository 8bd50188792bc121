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
 */
public record EventEnvelope<P>(UUID eventId, String type, Instant occurredAt, String subjectId, int version, P payload) {

    public static final int CURRENT_VERSION = 1;

    public EventEnvelope {
        Objects.requireNonNull(eventId, "eventId");
        Objects.requireNonNull(type, "type");
        Objects.requireNonNull(occurredAt, "occurredAt");
        Objects.requireNonNull(subjectId, "subjectId");
        Objects.requireNonNull(payload, "payload");
        if (version < 1) {
            throw new IllegalArgumentException("version must be >= 1, was " + version);
        }
    }

    /** A new event with a fresh id, stamped now, at the current schema version. */
    public static <P> EventEnvelope<P> of(String type, String subjectId, P payload) {
        return new EventEnvelope<>(UUID.randomUUID(), type, Instant.now(), subjectId, CURRENT_VERSION, payload);
    }
}
