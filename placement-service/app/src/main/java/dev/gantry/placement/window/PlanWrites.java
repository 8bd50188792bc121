package dev.gantry.placement.window;

import dev.gantry.kit.outbox.Outbox;
import io.quarkus.hibernate.reactive.panache.Panache;
import io.smallrye.mutiny.Uni;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.Function;

/**
 * Rows to insert and delete and events to append, gathered while a plan is recorded and then
 * written table by table, so that with batching on each table's rows go in one statement batch.
 * The events go last, all together ({@link Outbox#appendAll}: their ids in one query, their rows in
 * one batch).
 */
final class PlanWrites {

    /** Rows per batched statement when a plan is recorded. */
    private static final int WRITE_BATCH = 100;

    private final Map<Class<?>, List<Object>> inserts = new LinkedHashMap<>();
    private final List<Object> deletes = new ArrayList<>();
    private final List<Event> events = new ArrayList<>();

    private record Event(String subject, String jobId, Object payload) {
    }

    void insert(Object row) {
        inserts.computeIfAbsent(row.getClass(), c -> new ArrayList<>()).add(row);
    }

    void delete(Object row) {
        deletes.add(row);
    }

    void event(String subject, UUID jobId, Object payload) {
        events.add(new Event(subject, jobId.toString(), payload));
    }

    /** Inside a transaction. */
    Uni<Void> apply(Outbox outbox) {
        return Panache.getSession().chain(session -> {
            Uni<Void> chain = Uni.createFrom().voidItem();
            for (List<Object> rows : inserts.values()) {
                chain = chain.chain(() -> session.persistAll(rows.toArray()));
            }
            if (!deletes.isEmpty()) {
                chain = chain.chain(() -> session.removeAll(deletes.toArray()));
            }
            // one query for every event's id and one batch of rows (before: a query and a flush per event)
            List<Outbox.Pending> pending = events.stream().map(e -> new Outbox.Pending(e.subject(), e.jobId(), e.payload())).toList();
            return chain.chain(() -> outbox.appendAll(pending)).replaceWithVoid();
        });
    }

    /**
     * Turns on statement batching for this session: the inserts, updates and deletes of a plan go to
     * PostgreSQL a batch per table instead of a round trip per row.
     */
    static Uni<Void> batching() {
        return Panache.getSession().invoke(session -> session.setBatchSize(WRITE_BATCH)).replaceWithVoid();
    }

    static <T> Map<UUID, T> byJob(List<T> rows, Function<T, UUID> jobId) {
        Map<UUID, T> map = new HashMap<>();
        rows.forEach(r -> map.put(jobId.apply(r), r));
        return map;
    }
}
