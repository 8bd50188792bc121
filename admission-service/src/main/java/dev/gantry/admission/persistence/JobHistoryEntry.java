package dev.gantry.admission.persistence;

import dev.gantry.admission.domain.JobState;
import io.quarkus.hibernate.reactive.panache.PanacheEntityBase;
import io.smallrye.mutiny.Uni;
import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.EnumType;
import jakarta.persistence.Enumerated;
import jakarta.persistence.GeneratedValue;
import jakarta.persistence.GenerationType;
import jakarta.persistence.Id;
import jakarta.persistence.Table;
import java.time.Instant;
import java.util.List;
import java.util.UUID;

/** One step of a job's life: the state it entered, why, and who said so (the user, admission, placement). */
@Entity
@Table(name = "job_history")
public class JobHistoryEntry extends PanacheEntityBase {

    @Id
    @GeneratedValue(strategy = GenerationType.IDENTITY)
    public Long id;

    @Column(name = "job_id", nullable = false)
    public UUID jobId;

    @Column(nullable = false)
    public Instant at;

    @Enumerated(EnumType.STRING)
    @Column(nullable = false)
    public JobState state;

    @Column(columnDefinition = "text")
    public String reason;

    /** {@code submitted}, {@code cancelled} or the placement event's type. */
    @Column(nullable = false)
    public String source;

    /** Records a step; call inside the transaction of the change. */
    public static Uni<Void> record(UUID jobId, JobState state, String reason, String source) {
        JobHistoryEntry entry = new JobHistoryEntry();
        entry.jobId = jobId;
        entry.at = Instant.now();
        entry.state = state;
        entry.reason = reason;
        entry.source = source;
        return entry.persist().replaceWithVoid();
    }

    public static Uni<List<JobHistoryEntry>> of(UUID jobId) {
        return find("jobId = ?1 order by id", jobId).list();
    }
}
