package dev.gantry.quota.persistence;

import io.quarkus.hibernate.reactive.panache.PanacheEntityBase;
import io.smallrye.mutiny.Uni;
import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;
import java.time.Instant;
import java.util.UUID;

/** The tombstone of a job that ended: a late or repeated jobs.queued for it is not pending demand. */
@Entity
@Table(name = "ended_job")
public class EndedJobEntity extends PanacheEntityBase {

    @Id
    @Column(name = "job_id")
    public UUID jobId;

    @Column(name = "ended_at", nullable = false)
    public Instant endedAt;

    /** Leaves the tombstone once; call inside the transaction that applies the end. */
    public static Uni<Void> record(UUID jobId, Instant at) {
        return EndedJobEntity.<EndedJobEntity>findById(jobId).chain(existing -> {
            if (existing != null) {
                return Uni.createFrom().voidItem();
            }
            EndedJobEntity row = new EndedJobEntity();
            row.jobId = jobId;
            row.endedAt = at;
            return row.persist().replaceWithVoid();
        });
    }
}
