package dev.gantry.kit.inbox;

import dev.gantry.contracts.events.EventEnvelope;
import dev.gantry.contracts.events.Subjects;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.hibernate.reactive.panache.Panache;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.UUID;
import java.util.function.Function;
import org.jboss.logging.Logger;

/**
 * The consumer side of exactly-once effects: a handler records the event id in the same
 * transaction as its change, and skips the change when the id was already there. The insert
 * races safely (primary key + ON CONFLICT), so two redeliveries processed at once still apply once.
 */
@ApplicationScoped
public class ProcessedEvents {

    private static final Logger LOG = Logger.getLogger(ProcessedEvents.class);

    private final MeterRegistry registry;

    public ProcessedEvents(MeterRegistry registry) {
        this.registry = registry;
    }

    /**
     * Applies {@code change} to the event once: in one transaction with the record of its id, and
     * not at all for a duplicate. Counts {@code gantry_events_consumed_total{stream,outcome}}; a
     * failure rolls both back, so the redelivered event is applied then.
     */
    public <P> Uni<Void> applyOnce(EventEnvelope<P> envelope, Function<EventEnvelope<P>, Uni<Void>> change) {
        String stream = Subjects.streamOf(envelope.type());
        return Panache.withTransaction(() -> markFirstSeen(envelope.eventId(), envelope.type())
                        .chain(first -> first ? change.apply(envelope).replaceWith(true) : Uni.createFrom().item(false)))
                .invoke(applied -> registry.counter("gantry.events.consumed", "stream", stream,
                        "outcome", applied ? "applied" : "duplicate").increment())
                .onFailure().invoke(e -> LOG.warnf("%s %s not applied (redelivered later): %s",
                        envelope.type(), envelope.eventId(), e.toString()))
                .replaceWithVoid();
    }

    /** True if this is the first time the event is seen (and it is now recorded); false for a duplicate. */
    public Uni<Boolean> markFirstSeen(UUID eventId, String type) {
        return Panache.getSession().chain(session -> session
                .createNativeQuery("insert into processed_event (event_id, type, processed_at) values (?1, ?2, now()) "
                        + "on conflict (event_id) do nothing")
                .setParameter(1, eventId)
                .setParameter(2, type)
                .executeUpdate())
                .map(inserted -> inserted == 1);
    }
}
