package dev.gantry.kit.inbox;

import io.quarkus.hibernate.reactive.panache.Panache;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.UUID;

/**
 * The consumer side of exactly-once effects: a handler records the event id in the same
 * transaction as its change, and skips the change when the id was already there. The insert
 * races safely (primary key + ON CONFLICT), so two redeliveries processed at once still apply once.
 */
@ApplicationScoped
public class ProcessedEvents {

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
