package dev.gantry.kit.outbox;

import dev.gantry.contracts.events.EventCodec;
import dev.gantry.contracts.events.EventEnvelope;
import dev.gantry.contracts.events.Subjects;
import io.quarkus.hibernate.reactive.panache.Panache;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.enterprise.context.ApplicationScoped;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.UUID;
import org.eclipse.microprofile.config.inject.ConfigProperty;

/**
 * Appends events to the outbox. Call it inside the transaction that makes the change. Each event
 * carries the row's id as its sequence, so consumers can tell a later change from an earlier one
 * that the broker delivered late.
 */
@ApplicationScoped
public class Outbox {

    /**
     * An outbox row ready to be inserted by a caller that writes with plain SQL instead of entities
     * (a hot path such as admission's submit): its id is already taken from the sequence and stamped
     * into the envelope as its sequence. Insert it with {@link #INSERT_SQL}'s columns, in the same
     * statement or transaction as the change, then {@link #appended()}.
     */
    public record Prepared(long id, UUID eventId, String subject, String subjectId, String envelope, Instant createdAt) {

        /** id, event_id, subject, subject_id, envelope, created_at (UTC), as {@link #INSERT_SQL} takes them from $first on. */
        public Tuple addTo(Tuple tuple) {
            return tuple.addLong(id).addUUID(eventId).addString(subject).addString(subjectId).addString(envelope)
                    .addOffsetDateTime(createdAt.atOffset(ZoneOffset.UTC));
        }
    }

    /** The columns of an outbox row, in the order {@link Prepared#addTo} adds them. */
    public static final String INSERT_SQL = "insert into outbox_event (id, event_id, subject, subject_id, envelope, created_at)";

    private static final String NEXT_ID_SQL = "select nextval(pg_get_serial_sequence('outbox_event', 'id'))";

    private final long maxEventBytes;
    private final Pool pool;
    private final OutboxRelay relay;

    public Outbox(@ConfigProperty(name = "gantry.outbox.max-event-bytes", defaultValue = "1000000") long maxEventBytes,
            Pool pool, OutboxRelay relay) {
        this.maxEventBytes = maxEventBytes;
        this.pool = pool;
        this.relay = relay;
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

    /**
     * Also wakes the relay (see {@link OutboxRelay#wake}): it looks for the row again and again for a
     * short while, so the row goes out within milliseconds of its commit rather than at the next poll.
     */
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
        }).invoke(relay::wake);
    }

    /**
     * An outbox row for {@code payload}, its id taken from the sequence (one statement, outside any
     * transaction: a sequence is not transactional anyway), refused as {@link #append} refuses one
     * the broker would not take. The caller inserts it (see {@link Prepared}).
     */
    public <P> Uni<Prepared> prepare(String subject, String subjectId, P payload) {
        if (!Subjects.ALL.contains(subject)) {
            throw new IllegalArgumentException("unknown subject " + subject);
        }
        return pool.query(NEXT_ID_SQL).execute().map(rows -> {
            long id = rows.iterator().next().getLong(0);
            EventEnvelope<P> envelope = EventEnvelope.of(subject, subjectId, payload, id);
            String encoded = EventCodec.encode(envelope);
            requireFits(subject, encoded);
            return new Prepared(id, envelope.eventId(), subject, subjectId, encoded, Instant.now());
        });
    }

    /** Tells the relay that rows were committed (after the transaction that wrote a {@link Prepared} row). */
    public void appended() {
        relay.wake();
    }

    /** One event of {@link #appendAll}. */
    public record Pending(String subject, String subjectId, Object payload) {
    }

    /**
     * Several events, appended in the order given, with one query for all their ids (ascending, so
     * the order given is their sequence order) and their rows persisted together (one statement
     * batch when the session batches): a plan's events used to cost a sequence query and a flush each.
     * Inside the transaction that makes the change; wakes the relay like {@link #append}.
     */
    public Uni<List<EventEnvelope<Object>>> appendAll(List<Pending> events) {
        if (events.isEmpty()) {
            return Uni.createFrom().item(List.of());
        }
        for (Pending e : events) {
            if (!Subjects.ALL.contains(e.subject())) {
                throw new IllegalArgumentException("unknown subject " + e.subject());
            }
        }
        return Panache.getSession().chain(session -> session
                        .createNativeQuery("select nextval(pg_get_serial_sequence('outbox_event', 'id')) from generate_series(1, ?1)", Long.class)
                        .setParameter(1, events.size())
                        .getResultList()
                        .chain(ids -> {
                            List<Long> sorted = new ArrayList<>(ids);
                            Collections.sort(sorted);
                            List<EventEnvelope<Object>> envelopes = new ArrayList<>();
                            List<OutboxEvent> rows = new ArrayList<>();
                            Instant now = Instant.now();
                            for (int i = 0; i < events.size(); i++) {
                                Pending e = events.get(i);
                                EventEnvelope<Object> envelope = EventEnvelope.of(e.subject(), e.subjectId(), e.payload(), sorted.get(i));
                                String encoded = EventCodec.encode(envelope);
                                requireFits(e.subject(), encoded);
                                OutboxEvent row = new OutboxEvent();
                                row.id = sorted.get(i);
                                row.eventId = envelope.eventId();
                                row.subject = e.subject();
                                row.subjectId = e.subjectId();
                                row.envelope = encoded;
                                row.createdAt = now;
                                rows.add(row);
                                envelopes.add(envelope);
                            }
                            return session.persistAll(rows.toArray()).replaceWith(envelopes);
                        }))
                .invoke(relay::wake);
    }

    /** The row's id, which is also the event's sequence: the producer's order of its events. */
    private Uni<Long> nextId() {
        return Panache.getSession().chain(session -> session
                .createNativeQuery("select nextval(pg_get_serial_sequence('outbox_event', 'id'))", Long.class)
                .getSingleResult());
    }
}
