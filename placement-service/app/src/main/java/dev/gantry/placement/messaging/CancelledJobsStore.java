package dev.gantry.placement.messaging;

import dev.gantry.contracts.events.Subjects;
import dev.gantry.contracts.placements.PlacementReleased;
import dev.gantry.kit.outbox.Outbox;
import dev.gantry.kit.sql.ValuesList;
import dev.gantry.placement.persistence.JobMigration;
import io.quarkus.hibernate.reactive.panache.Panache;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.hibernate.reactive.mutiny.Mutiny;
import org.jboss.logging.Logger;

/**
 * Applies a run of {@code jobs.cancelled} events in one statement plus one for their events,
 * inside the caller's transaction, where nothing has to be done on a cluster for them (no pods to
 * stop: standalone mode with or without node agents). Event by event a cancellation cost about
 * fifteen round trips; a user cancelling a sweep of 2,000 jobs held the jobs consumer, and every
 * submission queued behind it, for minutes (issue 18: nothing stalls).
 * <p>
 * Its effect is that of {@code JobEventsConsumer}'s one-by-one cancellation on each event in turn:
 * the event's id in the inbox (a duplicate changes nothing), a tombstone (the first end is kept),
 * the job out of the pending set, and for a running job its allocations (the bookings follow by
 * trigger), agent tasks, preemption, gang and in-flight move gone, and {@code placements.completed}
 * "cancelled" appended for it.
 */
@ApplicationScoped
public class CancelledJobsStore {

    private static final Logger LOG = Logger.getLogger(CancelledJobsStore.class);

    /** One {@code jobs.cancelled}: its event id and the job. */
    public record Cancelled(UUID eventId, UUID jobId) {
    }

    /** How many events were new (not in the inbox yet), and which of their jobs were pending or running. */
    public record Outcome(int fresh, List<UUID> wasPending, List<UUID> wasRunning) {
    }

    private static final int COLUMNS = 2;

    private final Outbox outbox;

    public CancelledJobsStore(Outbox outbox) {
        this.outbox = outbox;
    }

    /**
     * Waits for any window binding one of the run's jobs, and keeps the next from taking one: the
     * statement below reads the running jobs as they were when it began, so a job a window took from
     * pending to running while it waited would be found in neither and keep its GPUs though
     * cancelled. A window that reaches a locked row after this fails its delete and binds nothing.
     * Locked in job order, as a window's rows are, so two such transactions never deadlock.
     */
    private static Uni<Void> lockPending(Mutiny.Session session, List<Cancelled> run) {
        List<UUID> jobs = run.stream().map(Cancelled::jobId).distinct().sorted().toList();
        return session.createNativeQuery("select cast(job_id as text) from pending_job where job_id in (?1) order by job_id for update", String.class)
                .setParameter(1, jobs)
                .getResultList()
                .replaceWithVoid();
    }

    public Uni<Outcome> cancelAll(List<Cancelled> run) {
        String values = ValuesList.of(run.size(), true, "uuid", "uuid");
        int abandoned = run.size() * COLUMNS + 1;
        // the writable CTEs see the tables as they were before the statement: each reads what earlier
        // statements of the transaction wrote, and no two of them touch the same rows
        String sql = "with ev (event_id, job_id, ord) as (values " + values + "), "
                + "fresh as (insert into processed_event (event_id, type, processed_at) "
                + "    select distinct event_id, 'jobs.cancelled', now() from ev on conflict (event_id) do nothing returning event_id), "
                + "jobs as (select ev.job_id, min(ev.ord) as ord from ev join fresh on fresh.event_id = ev.event_id group by ev.job_id), "
                + "tombstone as (insert into ended_job (job_id, ended_at, how) select job_id, now(), 'cancelled' from jobs "
                + "    on conflict (job_id) do nothing), "
                + "unpending as (delete from pending_job p using jobs j where p.job_id = j.job_id returning p.job_id), "
                + "released as (delete from running_job r using jobs j where r.job_id = j.job_id returning r.job_id, r.queue, j.ord), "
                + "allocations as (delete from allocation a using released r where a.job_id = r.job_id), "
                + "tasks as (delete from agent_task t using released r where t.job_id = r.job_id), "
                + "preemptions as (delete from job_preemption p using released r where p.job_id = r.job_id), "
                + "gangs as (delete from cluster_gang g using released r where g.job_id = r.job_id), "
                + "moves as (update job_migration m set finished_at = now(), outcome = cast(?" + abandoned + " as text) "
                + "    from released r where m.job_id = r.job_id and m.finished_at is null) "
                + "select 'fresh', cast(event_id as text), cast(null as text), 0 from fresh "
                + "union all select 'pending', cast(job_id as text), cast(null as text), 0 from unpending "
                + "union all select 'running', cast(job_id as text), queue, ord from released";
        return Panache.getSession().chain(session -> session.flush().chain(() -> lockPending(session, run)).chain(() -> {
            Mutiny.SelectionQuery<Object[]> query = session.createNativeQuery(sql, Object[].class);
            for (int i = 0; i < run.size(); i++) {
                query.setParameter(i * COLUMNS + 1, run.get(i).eventId());
                query.setParameter(i * COLUMNS + 2, run.get(i).jobId());
            }
            query.setParameter(abandoned, JobMigration.ABANDONED);
            return query.getResultList();
        })).chain(rows -> {
            int fresh = 0;
            List<UUID> pending = new ArrayList<>();
            List<Object[]> running = new ArrayList<>();
            for (Object[] row : rows) {
                switch (String.valueOf(row[0])) {
                    case "fresh" -> fresh++;
                    case "pending" -> pending.add(UUID.fromString(String.valueOf(row[1])));
                    case "running" -> running.add(row);
                    default -> {
                    }
                }
            }
            // in the run's order, as one event at a time would have appended them
            running.sort((a, b) -> Long.compare(((Number) a[3]).longValue(), ((Number) b[3]).longValue()));
            Instant now = Instant.now();
            List<Outbox.Pending> events = new ArrayList<>();
            List<UUID> released = new ArrayList<>();
            for (Object[] row : running) {
                UUID jobId = UUID.fromString(String.valueOf(row[1]));
                released.add(jobId);
                events.add(new Outbox.Pending(Subjects.PLACEMENTS_COMPLETED, jobId.toString(),
                        new PlacementReleased(jobId, String.valueOf(row[2]), "cancelled", now, null)));
            }
            int freshEvents = fresh;
            return outbox.appendAll(events).map(appended -> {
                released.forEach(jobId -> LOG.infof("job %s released its GPUs (%s: cancelled)", jobId, Subjects.PLACEMENTS_COMPLETED));
                return new Outcome(freshEvents, pending, released);
            });
        });
    }
}
