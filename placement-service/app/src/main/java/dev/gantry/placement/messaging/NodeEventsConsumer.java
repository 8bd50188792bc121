package dev.gantry.placement.messaging;

import com.fasterxml.jackson.databind.JsonNode;
import dev.gantry.contracts.events.EventCodec;
import dev.gantry.contracts.events.EventEnvelope;
import dev.gantry.contracts.events.MalformedEventException;
import dev.gantry.contracts.events.Subjects;
import dev.gantry.contracts.nodes.NodeChanged;
import dev.gantry.contracts.nodes.NodeRemoved;
import dev.gantry.kit.inbox.ProcessedEvents;
import dev.gantry.placement.persistence.NodeRecord;
import dev.gantry.placement.window.Binder;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.hibernate.reactive.panache.Panache;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Instant;
import java.util.function.Function;
import org.eclipse.microprofile.reactive.messaging.Incoming;
import org.jboss.logging.Logger;

/**
 * Keeps the node table from {@code nodes.upserted} / {@code nodes.removed} on a durable JetStream
 * consumer, idempotent by event id (inbox) and ordered by the inventory's snapshot version: an
 * event not newer than what is stored for the node changes nothing. Removal leaves a tombstone.
 */
@ApplicationScoped
public class NodeEventsConsumer {

    private static final Logger LOG = Logger.getLogger(NodeEventsConsumer.class);

    private final ProcessedEvents processed;
    private final Binder binder;
    private final Counter malformed;

    public NodeEventsConsumer(ProcessedEvents processed, Binder binder, MeterRegistry registry) {
        this.processed = processed;
        this.binder = binder;
        this.malformed = registry.counter("gantry.events.consumed", "stream", Subjects.NODES_STREAM, "outcome", "malformed");
    }

    @Incoming("nodes-in")
    public Uni<Void> onNodeEvent(JsonNode event) {
        String type = event.path("type").asText("");
        try {
            return switch (type) {
                case Subjects.NODES_UPSERTED -> applyOnce(EventCodec.decode(event, NodeChanged.class), this::upsert);
                case Subjects.NODES_REMOVED -> applyOnce(EventCodec.decode(event, NodeRemoved.class), this::remove);
                default -> {
                    LOG.debugf("ignoring %s event", type);
                    yield Uni.createFrom().voidItem();
                }
            };
        } catch (MalformedEventException e) {
            malformed.increment();
            LOG.errorf("dropping malformed %s event: %s", type, e.getMessage());
            return Uni.createFrom().voidItem();
        }
    }

    private <P> Uni<Void> applyOnce(EventEnvelope<P> envelope, Function<P, Uni<Void>> change) {
        return processed.applyOnce(envelope, e -> change.apply(e.payload()));
    }

    private Uni<Void> upsert(NodeChanged changed) {
        if (changed.node() == null || changed.node().name() == null) {
            LOG.warn("nodes.upserted without a node, ignored");
            return Uni.createFrom().voidItem();
        }
        return store(changed.node().name(), changed.snapshotVersion(), EventCodec.toJson(changed.node()), false, changed.node().source())
                .replaceWithVoid();
    }

    /** The node is gone: so are the jobs on it (back to pending, {@code placements.failed}), in the same transaction. */
    private Uni<Void> remove(NodeRemoved removed) {
        return store(removed.name(), removed.snapshotVersion(), null, true, null)
                .chain(stored -> stored ? binder.failJobsOn(removed.name()) : Uni.createFrom().voidItem());
    }

    /** True when stored (the event is not older than what is there). */
    private Uni<Boolean> store(String name, long version, String info, boolean removed, String source) {
        return NodeRecord.<NodeRecord>findById(name).chain(existing -> {
            if (existing != null && existing.snapshotVersion > version) {
                LOG.debugf("node %s: event of version %d older than stored %d, ignored", name, version, existing.snapshotVersion);
                return Uni.createFrom().item(false);
            }
            NodeRecord row = existing != null ? existing : new NodeRecord();
            row.name = name;
            row.snapshotVersion = version;
            row.removed = removed;
            if (info != null) {
                row.info = info;
                row.source = source;
            } else if (row.info == null) {
                row.info = "{}";
            }
            row.updatedAt = Instant.now();
            return row.persist().replaceWith(true);
        });
    }
}
