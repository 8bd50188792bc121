package dev.gantry.quota.persistence;

import io.quarkus.hibernate.reactive.panache.PanacheEntityBase;
import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;
import java.time.Instant;
import java.util.UUID;

/** What a bound job holds (from placements.bound), until it is released. */
@Entity
@Table(name = "allocation")
public class AllocationEntity extends PanacheEntityBase {

    @Id
    @Column(name = "job_id")
    public UUID jobId;

    @Column(nullable = false)
    public String queue;

    public String owner;

    @Column(nullable = false)
    public int gpus;

    @Column(name = "gpu_model")
    public String gpuModel;

    @Column(name = "cpu_millis", nullable = false)
    public long cpuMillis;

    @Column(name = "memory_mib", nullable = false)
    public long memoryMiB;

    @Column(name = "bound_at", nullable = false)
    public Instant boundAt;
}
