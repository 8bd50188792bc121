package dev.gantry.kit.retention;

import io.quarkus.hibernate.reactive.panache.Panache;
import io.quarkus.scheduler.Scheduled;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Duration;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.jboss.logging.Logger;

/**
 * Keeps the kit's tables from growing for ever: published outbox rows, and the inbox's processed
 * event ids, are deleted once older than their retention. Unpublished rows and dead letters are
 * never deleted. The inbox must remember an event for longer than the broker keeps it (the streams'
 * {@code maximum-age}, 7 days), or a redelivery after that could be applied twice: the default is 8
 * days. Deletes go in slices, so one pass never holds long locks.
 */
@ApplicationScoped
public class Retention {

    private static final Logger LOG = Logger.getLogger(Retention.class);
    static final int SLICE = 5_000;

    private final Duration outbox;
    private final Duration processedEvents;

    public Retention(@ConfigProperty(name = "gantry.retention.outbox", defaultValue = "3d") Duration outbox,
            @ConfigProperty(name = "gantry.retention.processed-events", defaultValue = "8d") Duration processedEvents) {
        this.outbox = outbox;
        this.processedEvents = processedEvents;
    }

    @Scheduled(every = "${gantry.retention.interval:1h}", delayed = "1m", concurrentExecution = Scheduled.ConcurrentExecution.SKIP,
            skipExecutionIf = Scheduled.ApplicationNotRunning.class)
    Uni<Void> scheduled() {
        return prune().onFailure().recoverWithItem(e -> {
            LOG.warnf("pruning old rows failed (next pass retries): %s", e.toString());
            return 0L;
        }).replaceWithVoid();
    }

    /** One pass; the item is how many rows went. */
    public Uni<Long> prune() {
        return sliced("delete from outbox_event where id in (select id from outbox_event"
                + " where published_at < now() - make_interval(secs => ?1) order by id limit " + SLICE + ")", outbox)
                .chain(outboxRows -> sliced("delete from processed_event where event_id in (select event_id from processed_event"
                        + " where processed_at < now() - make_interval(secs => ?1) limit " + SLICE + ")", processedEvents)
                        .map(inbox -> outboxRows + inbox))
                .invoke(total -> {
                    if (total > 0) {
                        LOG.infof("pruned %d published outbox rows and processed event ids past their retention", total);
                    }
                });
    }

    /**
     * Runs a delete of at most {@link #SLICE} rows older than {@code age} (its {@code ?1}, in
     * seconds) until one deletes less; for services' own tables too (admission's idempotency keys).
     */
    public static Uni<Long> sliced(String sql, Duration age) {
        return Panache.withTransaction(() -> Panache.getSession().chain(session -> session.createNativeQuery(sql)
                        .setParameter(1, (double) age.toSeconds()).executeUpdate()))
                .chain(deleted -> deleted < SLICE ? Uni.createFrom().item((long) deleted)
                        : sliced(sql, age).map(more -> more + deleted));
    }
}
