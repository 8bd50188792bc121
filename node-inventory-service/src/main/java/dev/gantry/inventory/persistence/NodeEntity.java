package dev.gantry.inventory.persistence;

import dev.gantry.contracts.events.EventCodec;
import dev.gantry.contracts.nodes.NodeInfo;
import dev.gantry.inventory.domain.NodeSource;
import dev.gantry.inventory.domain.NodeState;
import io.quarkus.hibernate.reactive.panache.PanacheEntityBase;
import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.EnumType;
import jakarta.persistence.Enumerated;
import jakarta.persistence.Id;
import jakarta.persistence.Table;
import java.time.Instant;

/**
 * A node as stored: what its source describes (one JSON document, always read whole), and beside
 * it the inventory's own state (source, cordon, health, last heartbeat) and the columns the read
 * API filters on ({@code gpu_model}, {@code leaf}, effective {@code schedulable}).
 */
@Entity
@Table(name = "node")
public class NodeEntity extends PanacheEntityBase {

    @Id
    public String name;

    @Column(name = "gpu_model")
    public String gpuModel;

    @Column(nullable = false)
    public int gpus;

    /** Effective: the source says schedulable and the node is not cordoned. */
    @Column(nullable = false)
    public boolean schedulable;

    @Column(nullable = false)
    public boolean cordoned;

    @Enumerated(EnumType.STRING)
    @Column(nullable = false)
    public NodeSource source;

    @Enumerated(EnumType.STRING)
    @Column(nullable = false)
    public NodeInfo.Health health;

    @Column(name = "last_heartbeat")
    public Instant lastHeartbeat;

    public String leaf;

    /** The node as its source describes it ({@link NodeInfo} as JSON; cordon, health and heartbeat are the columns). */
    @Column(nullable = false, columnDefinition = "text")
    public String description;

    @Column(name = "updated_at", nullable = false)
    public Instant updatedAt;

    /** Stores {@code described} with the inventory's own state. */
    public void apply(NodeInfo described, NodeSource newSource, boolean newCordoned, NodeInfo.Health newHealth, Instant heartbeat) {
        NodeInfo stored = described.withSchedulable(described.schedulable(), false).withHealth(NodeInfo.Health.UNKNOWN, null)
                .withSource(null);
        name = described.name();
        gpuModel = described.gpuModel();
        gpus = described.gpus();
        leaf = described.topology().leaf();
        source = newSource;
        cordoned = newCordoned;
        health = newHealth;
        lastHeartbeat = heartbeat;
        schedulable = described.schedulable() && !newCordoned;
        description = EventCodec.toJson(stored);
        updatedAt = Instant.now();
    }

    public NodeInfo described() {
        return EventCodec.fromJson(description, NodeInfo.class);
    }

    /** The node as the inventory shows it, with its source (the column, never the description's). */
    public NodeInfo toInfo() {
        return NodeState.effective(described(), cordoned, health, lastHeartbeat).withSource(source == null ? null : source.name());
    }
}
