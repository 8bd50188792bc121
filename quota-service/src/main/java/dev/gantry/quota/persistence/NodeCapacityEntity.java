package dev.gantry.quota.persistence;

import io.quarkus.hibernate.reactive.panache.PanacheEntityBase;
import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;
import java.time.Instant;

/** A node's contribution to the cluster capacity (from nodes.*); only ready nodes count. */
@Entity
@Table(name = "node_capacity")
public class NodeCapacityEntity extends PanacheEntityBase {

    @Id
    public String name;

    @Column(name = "gpu_model")
    public String gpuModel;

    @Column(nullable = false)
    public int gpus;

    @Column(name = "cpu_millis", nullable = false)
    public long cpuMillis;

    @Column(name = "memory_mib", nullable = false)
    public long memoryMiB;

    @Column(nullable = false)
    public boolean ready;

    @Column(name = "updated_at", nullable = false)
    public Instant updatedAt;
}
