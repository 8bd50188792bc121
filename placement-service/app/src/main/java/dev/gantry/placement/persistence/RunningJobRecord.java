package dev.gantry.placement.persistence;

import io.quarkus.hibernate.reactive.panache.PanacheEntityBase;
import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;
import java.time.Instant;
import java.util.UUID;

/**
 * A placed job (its GPUs are its {@link Allocation} rows). Keeps the {@code jobs.queued} payload so
 * a preempted job returns to the pending set with its original submission time, and the time the
 * standalone executor completes it: derived once at bind time, so a restart keeps it. Graceful
 * preemption and the protection of a recently preempted job are stored here too, for the same reason.
 */
@Entity
@Table(name = "running_job")
public class RunningJobRecord extends PanacheEntityBase {

    @Id
    @Column(name = "job_id")
    public UUID jobId;

    @Column(nullable = false)
    public String queue;

    @Column(nullable = false)
    public int priority;

    @Column(nullable = false, columnDefinition = "text")
    public String spec;

    @Column(name = "submitted_at", nullable = false)
    public Instant submittedAt;

    @Column(name = "bound_at", nullable = false)
    public Instant boundAt;

    @Column(name = "due_at", nullable = false)
    public Instant dueAt;

    /** Preempted with a grace period: told, still holding its GPUs until then; null when not being evicted. */
    @Column(name = "evicting_until")
    public Instant evictingUntil;

    /** Why it is being evicted (the preemption's reason). */
    @Column(name = "evict_reason", columnDefinition = "text")
    public String evictReason;

    /** Placed again after a preemption: not preemptible before this time; null when unprotected. */
    @Column(name = "protected_until")
    public Instant protectedUntil;

    /**
     * Being migrated: the tasks' new places (JSON list of {@code ClusterActuator.TaskBinding}), held
     * for it while it stops ({@link #evictingUntil} is its checkpoint grace); null when not moving.
     */
    @Column(name = "migration_targets", columnDefinition = "text")
    public String migrationTargets;

    /** When it was last moved (the disruption budget's minimum time between two moves of a job). */
    @Column(name = "last_migrated_at")
    public Instant lastMigratedAt;
}
