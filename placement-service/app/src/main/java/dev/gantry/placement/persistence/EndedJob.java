package dev.gantry.placement.persistence;

import io.quarkus.hibernate.reactive.panache.PanacheEntityBase;
import io.smallrye.mutiny.Uni;
import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;
import java.time.Instant;
import java.util.UUID;

/**
 * The tombstone of a job that ended (cancelled, completed, failed): a late or redelivered
 * {@code jobs.queued} for it is ignored instead of planning the job again.
 */
@Entity
@Table(name = "ended_job")
public class EndedJob extends PanacheEntityBase {

    @Id
    @Column(name = "job_id")
    public UUID jobId;

    @Column(name = "ended_at", nullable = false)
    public Instant endedAt;

    /** cancelled, or the subject of the release (placements.completed, placements.failed). */
    @Column(nullable = false)
    public String how;

    /** Leaves the tombstone (once; the first end is kept). Call inside the transaction of the end. */
    public static Uni<Void> record(UUID jobId, String how) {
        return EndedJob.<EndedJob>findById(jobId).chain(existing -> {
            if (existing != null) {
                return Uni.createFrom().voidItem();
            }
            EndedJob row = new EndedJob();
            row.jobId = jobId;
            row.endedAt = Instant.now();
            row.how = how;
            return row.persist().replaceWithVoid();
        });
    }

    public static Uni<Boolean> ended(UUID jobId) {
        return EndedJob.<EndedJob>findById(jobId).map(row -> row != null);
    }
}
