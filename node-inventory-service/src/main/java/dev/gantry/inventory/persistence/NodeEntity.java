package dev.gantry.inventory.persistence;

import dev.gantry.contracts.events.EventCodec;
import dev.gantry.contracts.nodes.NodeInfo;
import io.quarkus.hibernate.reactive.panache.PanacheEntityBase;
import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.EnumType;
import jakarta.persistence.Enumerated;
import jakarta.persistence.Id;
import jakarta.persistence.Table;
import java.time.Instant;

/**
 * A node as stored: the fields placement filters on are columns; the GPU topology, labels and
 * taints, always read whole, are one JSON document.
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

    @Column(nullable = false)
    public boolean schedulable;

    @Enumerated(EnumType.STRING)
    @Column(nullable = false)
    public NodeInfo.Health health;

    @Column(name = "last_heartbeat")
    public Instant lastHeartbeat;

    /** The whole {@link NodeInfo} as JSON. */
    @Column(nullable = false, columnDefinition = "text")
    public String description;

    @Column(name = "updated_at", nullable = false)
    public Instant updatedAt;

    public void apply(NodeInfo node) {
        name = node.name();
        gpuModel = node.gpuModel();
        gpus = node.gpus();
        schedulable = node.schedulable();
        health = node.health();
        description = EventCodec.toJson(node);
        updatedAt = Instant.now();
    }

    public NodeInfo toInfo() {
        return EventCodec.fromJson(description, NodeInfo.class);
    }
}
