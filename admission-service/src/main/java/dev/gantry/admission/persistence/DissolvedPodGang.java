package dev.gantry.admission.persistence;

import io.quarkus.hibernate.reactive.panache.PanacheEntityBase;
import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;
import java.time.Instant;
import java.util.UUID;

/** A pod gang withdrawn before it was admitted: its late {@code placements.gang-formed} admits nothing. */
@Entity
@Table(name = "dissolved_pod_gang")
public class DissolvedPodGang extends PanacheEntityBase {

    @Id
    @Column(name = "job_id")
    public UUID jobId;

    @Column(name = "dissolved_at", nullable = false)
    public Instant dissolvedAt;
}
