package dev.gantry.kit.outbox;

import io.quarkus.hibernate.reactive.panache.PanacheEntityBase;
import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;
import java.time.Instant;
import java.util.UUID;

/**
 * An event written in the same transaction as the change it announces. The relay publishes rows
 * in id order and stamps {@code publishedAt}; a row is never published before its transaction
 * commits, and never lost if the broker is down.
 */
@Entity
@Table(name = "outbox_event")
public class OutboxEvent extends PanacheEntityBase {

    /** From the identity's sequence, taken by {@link Outbox} before the row is written; also the envelope's sequence. */
    @Id
    public Long id;

    @Column(name = "event_id", nullable = false, unique = true)
    public UUID eventId;

    @Column(nullable = false)
    public String subject;

    @Column(name = "subject_id", nullable = false)
    public String subjectId;

    /** The whole envelope as JSON, exactly as it goes on the wire. */
    @Column(nullable = false, columnDefinition = "text")
    public String envelope;

    @Column(name = "created_at", nullable = false)
    public Instant createdAt;

    @Column(name = "published_at")
    public Instant publishedAt;

    @Column(nullable = false)
    public int attempts;

    @Column(name = "last_error", columnDefinition = "text")
    public String lastError;

    /** Set when the relay gave up on the row (a dead letter); cleared by a retry. */
    @Column(name = "dead_lettered_at")
    public Instant deadLetteredAt;
}
