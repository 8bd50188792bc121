package dev.gantry.placement.persistence;

import io.quarkus.hibernate.reactive.panache.PanacheEntityBase;
import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;
import java.time.Instant;
import java.util.UUID;

/** When a job was last preempted and how often; read when it is placed again (protection from thrashing). */
@Entity
@Table(name = "job_preemption")
public class JobPreemption extends PanacheEntityBase {

    @Id
    @Column(name = "job_id")
    public UUID jobId;

    @Column(name = "last_preempted_at", nullable = false)
    public Instant lastPreemptedAt;

    @Column(nullable = false)
    public int times;
}
