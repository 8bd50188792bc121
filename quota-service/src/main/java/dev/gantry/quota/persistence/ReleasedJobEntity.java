package dev.gantry.quota.persistence;

import io.quarkus.hibernate.reactive.panache.PanacheEntityBase;
import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;
import java.time.Instant;
import java.util.UUID;

/** A job whose release was seen; a late placements.bound for it is then ignored. */
@Entity
@Table(name = "released_job")
public class ReleasedJobEntity extends PanacheEntityBase {

    @Id
    @Column(name = "job_id")
    public UUID jobId;

    @Column(name = "released_at", nullable = false)
    public Instant releasedAt;
}
