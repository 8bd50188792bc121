package dev.gantry.inventory;

import dev.gantry.contracts.events.Subjects;
import dev.gantry.contracts.nodes.NodeChanged;
import dev.gantry.contracts.nodes.NodeInfo;
import dev.gantry.contracts.nodes.NodeRemoved;
import dev.gantry.contracts.nodes.NodeSnapshot;
import dev.gantry.contracts.validation.FieldViolation;
import dev.gantry.inventory.domain.NodeRules;
import dev.gantry.inventory.domain.NodeSource;
import dev.gantry.inventory.domain.NodeState;
import dev.gantry.inventory.persistence.InventoryVersion;
import dev.gantry.inventory.persistence.NodeEntity;
import dev.gantry.kit.outbox.Outbox;
import dev.gantry.kit.problem.InvalidRequestException;
import dev.gantry.kit.problem.Problem;
import io.quarkus.hibernate.reactive.panache.Panache;
import io.quarkus.panache.common.Parameters;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;
import java.util.stream.Collectors;

/**
 * The inventory's single write path, whatever the source (agent API, cluster file, Kubernetes):
 * validate, store, bump the snapshot version and announce the change on {@code nodes.*} through the
 * outbox, all in one transaction. Every write locks the version row first, so writes are
 * serialised and versions are handed out in commit order. A write that changes nothing a consumer
 * can see (a heartbeat, an identical description) neither bumps the version nor sends an event.
 *
 * <p>Health changes go out on {@code nodes.upserted} with the new health: there is no
 * {@code nodes.health} subject in the contracts.
 */
@ApplicationScoped
public class NodeRegistry {

    /** What a cluster-file apply did. */
    public record ApplyResult(long version, List<String> added, List<String> changed, List<String> removed, int unchanged) {
    }

    /** Filters and page of {@code GET /v1/nodes}; null filters match everything. */
    public record NodeQuery(String model, String leaf, Boolean schedulable, String after, int limit) {
    }

    private final Outbox outbox;

    public NodeRegistry(Outbox outbox) {
        this.outbox = outbox;
    }

    /** A source describes a node (new or known); returns it as the inventory now shows it. */
    public Uni<NodeInfo> upsert(NodeInfo described, NodeSource source) {
        List<FieldViolation> violations = NodeRules.violations(described);
        if (!violations.isEmpty()) {
            return Uni.createFrom().failure(InvalidRequestException.unprocessable(violations));
        }
        return Panache.withTransaction(() -> InventoryVersion.lockForWrite()
                .chain(version -> NodeEntity.<NodeEntity>findById(described.name())
                        .chain(existing -> {
                            if (source == NodeSource.AGENT && existing != null && existing.source == NodeSource.KUBERNETES) {
                                return Uni.createFrom().failure(kubernetesOwns(described.name()));
                            }
                            return write(version, existing, described, source);
                        })));
    }

    /**
     * 409 for the agent API on a node the Kubernetes informer registered: the cluster's Node object
     * owns its description and health, and an agent (or an admin on the agent API) taking it over
     * silently would make two sources fight over one node.
     */
    static InvalidRequestException kubernetesOwns(String name) {
        return new InvalidRequestException(409, "node " + name + " comes from Kubernetes; it is changed through its Node object, "
                + "not the agent API", List.of(new Problem.FieldError("name", "managed by Kubernetes")));
    }

    /** Replaces the file-sourced nodes with {@code nodes} (already validated): adds, updates, and removes the ones not listed. */
    public Uni<ApplyResult> applyClusterFile(List<NodeInfo> nodes) {
        for (int i = 0; i < nodes.size(); i++) {
            List<FieldViolation> violations = NodeRules.violations(nodes.get(i), "nodes[" + i + "].");
            if (!violations.isEmpty()) {
                return Uni.createFrom().failure(InvalidRequestException.unprocessable(violations));
            }
        }
        // The diff is worked out in memory and written in one batch (new rows persisted together, one
        // outbox append for every event): a chain of one step per node recursed once per node when the
        // steps completed at once (unchanged nodes), and a few thousand of them overflowed the stack.
        return Panache.withTransaction(() -> InventoryVersion.lockForWrite()
                .chain(version -> NodeEntity.<NodeEntity>listAll().chain(all -> {
                    Map<String, NodeEntity> byName = all.stream().collect(Collectors.toMap(e -> e.name, e -> e));
                    Set<String> listed = new HashSet<>();
                    List<String> added = new ArrayList<>();
                    List<String> changed = new ArrayList<>();
                    List<String> removed = new ArrayList<>();
                    List<NodeEntity> fresh = new ArrayList<>();
                    List<NodeEntity> gone = new ArrayList<>();
                    List<Outbox.Pending> events = new ArrayList<>();
                    int unchanged = 0;
                    for (NodeInfo node : nodes) {
                        listed.add(node.name());
                        NodeEntity existing = byName.get(node.name());
                        NodeEntity entity = existing != null ? existing : new NodeEntity();
                        Outbox.Pending event = describe(version, entity, existing != null, node, NodeSource.FILE);
                        if (existing == null) {
                            fresh.add(entity);
                            added.add(node.name());
                        } else if (event != null) {
                            changed.add(node.name());
                        } else {
                            unchanged++;
                        }
                        if (event != null) {
                            events.add(event);
                        }
                    }
                    for (NodeEntity entity : all) {
                        if (entity.source == NodeSource.FILE && !listed.contains(entity.name)) {
                            removed.add(entity.name);
                            gone.add(entity);
                            events.add(new Outbox.Pending(Subjects.NODES_REMOVED, entity.name, new NodeRemoved(version.next(), entity.name)));
                        }
                    }
                    ApplyResult result = new ApplyResult(version.version, added, changed, removed, unchanged);
                    return Panache.getSession()
                            .chain(session -> session.persistAll(fresh.toArray()).chain(() -> session.removeAll(gone.toArray())))
                            .chain(() -> outbox.appendAll(events))
                            .replaceWith(result);
                })));
    }

    /** An agent's heartbeat: Ready again if it was not; null for an unknown node. */
    public Uni<NodeInfo> heartbeat(String name, Instant now) {
        return Panache.withTransaction(() -> NodeEntity.<NodeEntity>findById(name).chain(entity -> {
            if (entity == null) {
                return Uni.createFrom().nullItem();
            }
            if (entity.source == NodeSource.KUBERNETES) {
                return Uni.createFrom().failure(kubernetesOwns(name));
            }
            if (entity.health == NodeInfo.Health.READY) {
                entity.lastHeartbeat = now;
                return Uni.createFrom().item(entity.toInfo());
            }
            return mutate(name, e -> {
                e.health = NodeInfo.Health.READY;
                e.lastHeartbeat = now;
            });
        }));
    }

    /** Cordons or uncordons a node through the inventory; null for an unknown node. */
    public Uni<NodeInfo> cordon(String name, boolean cordoned) {
        return Panache.withTransaction(() -> mutate(name, e -> {
            e.cordoned = cordoned;
            e.schedulable = e.described().schedulable() && !cordoned;
        }));
    }

    /** Removes a node; false if there was none (or it belongs to another source than {@code onlyFrom}, when given). */
    public Uni<Boolean> remove(String name, NodeSource onlyFrom) {
        return Panache.withTransaction(() -> InventoryVersion.lockForWrite()
                .chain(version -> NodeEntity.<NodeEntity>findById(name).chain(entity -> {
                    if (entity == null || (onlyFrom != null && entity.source != onlyFrom)) {
                        return Uni.createFrom().item(false);
                    }
                    return delete(version, entity).replaceWith(true);
                })));
    }

    /** Agent nodes that have not sent a heartbeat within {@code timeout} turn NotReady; returns their names. */
    public Uni<List<String>> markStale(Instant now, Duration timeout) {
        // one lock, every stale node changed in memory, their events appended together (no step per node)
        return Panache.withTransaction(() -> InventoryVersion.lockForWrite().chain(version -> NodeEntity.<NodeEntity>list(
                        "source = ?1 and health = ?2 and lastHeartbeat < ?3 order by name",
                        NodeSource.AGENT, NodeInfo.Health.READY, now.minus(timeout))
                .chain(stale -> {
                    List<Outbox.Pending> events = new ArrayList<>();
                    for (NodeEntity entity : stale) {
                        if (!NodeState.stale(entity.health, entity.lastHeartbeat, now, timeout)) {
                            continue;
                        }
                        NodeInfo before = entity.toInfo();
                        entity.health = NodeInfo.Health.NOT_READY;
                        entity.updatedAt = Instant.now();
                        NodeInfo after = entity.toInfo();
                        if (NodeState.changed(before, after)) {
                            events.add(new Outbox.Pending(Subjects.NODES_UPSERTED, entity.name, new NodeChanged(version.next(), after)));
                        }
                    }
                    return outbox.appendAll(events).replaceWith(stale.stream().map(e -> e.name).toList());
                })));
    }

    public Uni<NodeInfo> find(String name) {
        return Panache.withSession(() -> NodeEntity.<NodeEntity>findById(name))
                .map(entity -> entity == null ? null : entity.toInfo());
    }

    /** One page of nodes in name order; the page holds up to {@code limit + 1} to tell whether more follow. */
    public Uni<List<NodeInfo>> list(NodeQuery query) {
        StringBuilder where = new StringBuilder("1 = 1");
        Parameters params = new Parameters();
        if (query.model() != null) {
            where.append(" and gpuModel = :model");
            params.and("model", query.model());
        }
        if (query.leaf() != null) {
            where.append(" and leaf = :leaf");
            params.and("leaf", query.leaf());
        }
        if (query.schedulable() != null) {
            where.append(" and schedulable = :schedulable");
            params.and("schedulable", query.schedulable());
        }
        if (query.after() != null) {
            where.append(" and name > :after");
            params.and("after", query.after());
        }
        return Panache.withSession(() -> NodeEntity.<NodeEntity>find(where + " order by name", params)
                        .page(0, query.limit() + 1).list())
                .map(nodes -> nodes.stream().map(NodeEntity::toInfo).toList());
    }

    /** Every schedulable Ready node and the version they are as of, read consistently. */
    public Uni<NodeSnapshot> snapshot() {
        return Panache.withTransaction(() -> InventoryVersion.lockForRead()
                .chain(version -> NodeEntity.<NodeEntity>list("schedulable = true and health = ?1 order by name",
                                NodeInfo.Health.READY)
                        .map(nodes -> new NodeSnapshot(version.version,
                                nodes.stream().map(NodeEntity::toInfo).filter(NodeState::inSnapshot).toList()))));
    }

    /** The current snapshot version, without reading nodes (for {@code If-None-Match}). */
    public Uni<Long> version() {
        return Panache.withSession(() -> InventoryVersion.<InventoryVersion>findById(1)).map(v -> v.version);
    }

    /** Every node, for metrics. */
    public Uni<List<NodeEntity>> entities() {
        return Panache.withSession(() -> NodeEntity.<NodeEntity>listAll());
    }

    private Uni<NodeInfo> write(InventoryVersion version, NodeEntity existing, NodeInfo described, NodeSource source) {
        NodeEntity entity = existing != null ? existing : new NodeEntity();
        Outbox.Pending event = describe(version, entity, existing != null, described, source);
        Uni<?> stored = existing != null ? Uni.createFrom().item(entity) : entity.persist();
        NodeInfo after = entity.toInfo();
        if (event == null) {
            return stored.replaceWith(after);
        }
        return stored.chain(() -> outbox.append(event.subject(), event.subjectId(), event.payload())).replaceWith(after);
    }

    /**
     * Gives {@code entity} the description {@code described} from {@code source} (keeping its cordon);
     * the event that announces it, with the next version, or null when nothing a consumer sees changed.
     */
    private static Outbox.Pending describe(InventoryVersion version, NodeEntity entity, boolean known, NodeInfo described,
            NodeSource source) {
        NodeInfo before = known ? entity.toInfo() : null;
        boolean cordoned = known && entity.cordoned;
        entity.apply(described, source, cordoned, described.health(), described.lastHeartbeat());
        NodeInfo after = entity.toInfo();
        if (!NodeState.changed(before, after)) {
            return null;
        }
        return new Outbox.Pending(Subjects.NODES_UPSERTED, after.name(), new NodeChanged(version.next(), after));
    }

    private Uni<Void> delete(InventoryVersion version, NodeEntity entity) {
        long next = version.next();
        return entity.delete()
                .chain(() -> outbox.append(Subjects.NODES_REMOVED, entity.name, new NodeRemoved(next, entity.name)))
                .replaceWithVoid();
    }

    /** Changes the inventory's own state of a node (cordon, health) under the version lock; null if unknown. */
    private Uni<NodeInfo> mutate(String name, Consumer<NodeEntity> mutation) {
        return InventoryVersion.lockForWrite().chain(version -> NodeEntity.<NodeEntity>findById(name).chain(entity -> {
            if (entity == null) {
                return Uni.createFrom().<NodeInfo>nullItem();
            }
            NodeInfo before = entity.toInfo();
            mutation.accept(entity);
            entity.updatedAt = Instant.now();
            NodeInfo after = entity.toInfo();
            if (!NodeState.changed(before, after)) {
                return Uni.createFrom().item(after);
            }
            long next = version.next();
            return outbox.append(Subjects.NODES_UPSERTED, name, new NodeChanged(next, after)).replaceWith(after);
        }));
    }

}
