package dev.gantry.quota.persistence;

import io.quarkus.hibernate.reactive.panache.PanacheEntityBase;
import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;
import java.time.Instant;
import java.util.UUID;

/** A job admitted and waiting (from jobs.queued), until it is bound or cancelled. */
@Entity
@Table(name = "pending_job")
public class PendingJobEntity extends PanacheEntityBase {

    @Id
    @Column(name = "job_id")
    public UUID jobId;

    @Column(nullable = false)
    public String queue;

    public String owner;

    @Column(nullable = false)
    public int gpus;

    @Column(name = "cpu_millis", nullable = false)
    public long cpuMillis;

    @Column(name = "memory_mib", nullable = false)
    public long memoryMiB;

    @Column(name = "queued_at", nullable = false)
    public Instant queuedAt;
}
