package dev.gantry.inventory;

import dev.gantry.contracts.events.Subjects;
import dev.gantry.contracts.nodes.NodeInfo;
import dev.gantry.contracts.validation.FieldViolation;
import dev.gantry.inventory.domain.NodeRules;
import dev.gantry.inventory.persistence.NodeEntity;
import dev.gantry.kit.outbox.Outbox;
import dev.gantry.kit.problem.InvalidRequestException;
import io.quarkus.hibernate.reactive.panache.Panache;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Instant;
import java.util.List;

/**
 * The inventory's single write path, whatever the source (agent API, cluster file, Kubernetes):
 * validate, store, and announce the change on {@code nodes.*} in the same transaction.
 */
@ApplicationScoped
public class NodeRegistry {

    private final Outbox outbox;

    public NodeRegistry(Outbox outbox) {
        this.outbox = outbox;
    }

    public Uni<NodeInfo> upsert(NodeInfo node) {
        List<FieldViolation> violations = NodeRules.violations(node);
        if (!violations.isEmpty()) {
            throw InvalidRequestException.unprocessable(violations);
        }
        return Panache.withTransaction(() -> NodeEntity.<NodeEntity>findById(node.name())
                .chain(existing -> {
                    NodeEntity entity = existing != null ? existing : new NodeEntity();
                    entity.apply(node);
                    entity.lastHeartbeat = Instant.now();
                    return entity.persist();
                })
                .chain(() -> outbox.append(Subjects.NODES_UPSERTED, node.name(), node)))
                .replaceWith(node);
    }

    public Uni<NodeInfo> find(String name) {
        return Panache.withSession(() -> NodeEntity.<NodeEntity>findById(name))
                .map(entity -> entity == null ? null : entity.toInfo());
    }

    public Uni<List<NodeInfo>> all() {
        return Panache.withSession(() -> NodeEntity.<NodeEntity>find("order by name").list())
                .map(nodes -> nodes.stream().map(NodeEntity::toInfo).toList());
    }
}
