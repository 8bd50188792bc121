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
 * standalone executor completes it: derived once at bind time, so a restart keeps it.
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
}
