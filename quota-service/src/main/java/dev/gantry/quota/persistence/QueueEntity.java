package dev.gantry.quota.persistence;

import dev.gantry.quota.domain.QueueSpec;
import io.quarkus.hibernate.reactive.panache.PanacheEntityBase;
import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.EnumType;
import jakarta.persistence.Enumerated;
import jakarta.persistence.Id;
import jakarta.persistence.Table;
import java.time.Instant;

@Entity
@Table(name = "queue")
public class QueueEntity extends PanacheEntityBase {

    @Id
    public String name;

    public String parent;

    @Column(nullable = false)
    public int weight;

    @Column(name = "guarantee_gpus", nullable = false)
    public int guaranteeGpus;

    /** null: unbounded */
    @Column(name = "capability_gpus")
    public Integer capabilityGpus;

    @Column(nullable = false)
    public boolean reclaimable;

    @Enumerated(EnumType.STRING)
    @Column(nullable = false)
    public QueueSpec.QueueState state;

    @Column(name = "updated_at", nullable = false)
    public Instant updatedAt;

    public QueueSpec toSpec() {
        return new QueueSpec(name, parent, weight, guaranteeGpus, capabilityGpus, reclaimable, state);
    }

    public void apply(QueueSpec spec) {
        name = spec.name();
        parent = spec.parent();
        weight = spec.weight();
        guaranteeGpus = spec.guaranteeGpus();
        capabilityGpus = spec.capabilityGpus();
        reclaimable = spec.reclaimable();
        state = spec.state();
        updatedAt = Instant.now();
    }
}
