package dev.gantry.admission.persistence;

import io.quarkus.hibernate.reactive.panache.PanacheEntityBase;
import jakarta.persistence.Column;
import jakarta.persistence.Embeddable;
import jakarta.persistence.EmbeddedId;
import jakarta.persistence.Entity;
import jakarta.persistence.Table;
import java.io.Serializable;
import java.time.Instant;
import java.util.UUID;

/** The first job a client's {@code Idempotency-Key} produced, and a hash of the request that produced it. */
@Entity
@Table(name = "idempotency_key")
public class IdempotencyKey extends PanacheEntityBase {

    @Embeddable
    public record Id(@Column(name = "owner") String owner, @Column(name = "key") String key) implements Serializable {
    }

    @EmbeddedId
    public Id id;

    @Column(name = "request_hash", nullable = false)
    public String requestHash;

    @Column(name = "job_id", nullable = false)
    public UUID jobId;

    @Column(name = "created_at", nullable = false)
    public Instant createdAt;
}
