package dev.gantry.quota.persistence;

import dev.gantry.quota.domain.PriorityClassSpec;
import io.quarkus.hibernate.reactive.panache.PanacheEntityBase;
import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.EnumType;
import jakarta.persistence.Enumerated;
import jakarta.persistence.Id;
import jakarta.persistence.Table;
import java.time.Instant;

@Entity
@Table(name = "priority_class")
public class PriorityClassEntity extends PanacheEntityBase {

    @Id
    public String name;

    @Column(nullable = false)
    public int value;

    @Enumerated(EnumType.STRING)
    @Column(name = "preemption_policy", nullable = false)
    public PriorityClassSpec.PreemptionPolicy preemptionPolicy;

    @Column(name = "global_default", nullable = false)
    public boolean globalDefault;

    public String description;

    /** JSON list of the queues whose subtrees may use the class; null or empty: all. */
    @Column(name = "allowed_queues", columnDefinition = "text")
    public String allowedQueues;

    /** JSON list of the teams that may use the class; null or empty: all. */
    @Column(name = "allowed_teams", columnDefinition = "text")
    public String allowedTeams;

    @Column(name = "updated_at", nullable = false)
    public Instant updatedAt;

    public PriorityClassSpec toSpec() {
        return new PriorityClassSpec(name, value, preemptionPolicy, globalDefault, description, QueueEntity.readList(allowedQueues),
                QueueEntity.readList(allowedTeams));
    }

    public void apply(PriorityClassSpec spec) {
        name = spec.name();
        value = spec.value();
        preemptionPolicy = spec.preemptionPolicy();
        globalDefault = spec.globalDefault();
        description = spec.description();
        allowedQueues = QueueEntity.write(spec.queues());
        allowedTeams = QueueEntity.write(spec.teams());
        updatedAt = Instant.now();
    }
}
