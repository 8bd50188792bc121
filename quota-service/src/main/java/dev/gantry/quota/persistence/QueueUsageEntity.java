package dev.gantry.quota.persistence;

import io.quarkus.hibernate.reactive.panache.PanacheEntityBase;
import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;
import java.time.Instant;

/** A queue's decayed historic usage in dominant-share hours, as of {@code updatedAt}. */
@Entity
@Table(name = "queue_usage")
public class QueueUsageEntity extends PanacheEntityBase {

    @Id
    public String queue;

    @Column(name = "usage_hours", nullable = false)
    public double usageHours;

    @Column(name = "updated_at", nullable = false)
    public Instant updatedAt;
}
