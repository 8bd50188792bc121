package dev.gantry.placement.persistence;

import io.quarkus.hibernate.reactive.panache.PanacheEntityBase;
import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;
import java.time.Instant;

/**
 * A node as the inventory last described it ({@code nodes.upserted}), or its tombstone after
 * {@code nodes.removed}. {@code snapshotVersion} orders the events: an older one is dropped.
 */
@Entity
@Table(name = "node")
public class NodeRecord extends PanacheEntityBase {

    @Id
    public String name;

    /** The {@code NodeInfo} JSON as received. */
    @Column(nullable = false, columnDefinition = "text")
    public String info;

    @Column(name = "snapshot_version", nullable = false)
    public long snapshotVersion;

    @Column(nullable = false)
    public boolean removed;

    /** The node's source in the inventory ({@code AGENT}: a node agent runs its tasks); null when not said. */
    public String source;

    @Column(name = "updated_at", nullable = false)
    public Instant updatedAt;
}
