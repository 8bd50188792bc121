package dev.gantry.placement.persistence;

import io.quarkus.hibernate.reactive.panache.PanacheEntityBase;
import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;
import java.time.Instant;
import java.util.UUID;

/** A job waiting for GPUs, as learned from {@code jobs.queued}; the window loop plans these. */
@Entity
@Table(name = "pending_job")
public class PendingJob extends PanacheEntityBase {

    @Id
    @Column(name = "job_id")
    public UUID jobId;

    @Column(nullable = false)
    public String name;

    @Column(nullable = false)
    public String queue;

    @Column(nullable = false)
    public int priority;

    @Column(name = "total_gpus", nullable = false)
    public int totalGpus;

    /** The {@code jobs.queued} payload as received, the input of the scenario built each window. */
    @Column(nullable = false, columnDefinition = "text")
    public String spec;

    @Column(name = "submitted_at", nullable = false)
    public Instant submittedAt;

    @Column(name = "received_at", nullable = false)
    public Instant receivedAt;

    /** Why the last window left it waiting (null before its first window). */
    @Column(columnDefinition = "text")
    public String reason;

    @Column(name = "reason_at")
    public Instant reasonAt;
}
