package dev.gantry.admission.persistence;

import io.quarkus.hibernate.reactive.panache.PanacheEntityBase;
import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;
import java.time.Instant;

/**
 * A Kubernetes namespace whose users' pod gangs Gantry admits, and the team they are charged to.
 * Only an admin maps a namespace: whoever may create pods there then submits as that team, so the
 * mapping is the grant.
 */
@Entity
@Table(name = "namespace_team")
public class NamespaceTeam extends PanacheEntityBase {

    @Id
    public String namespace;

    @Column(nullable = false)
    public String team;

    @Column(name = "updated_by", nullable = false)
    public String updatedBy;

    @Column(name = "updated_at", nullable = false)
    public Instant updatedAt;
}
