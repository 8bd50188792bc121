package dev.gantry.placement.messaging;

import dev.gantry.contracts.events.EventCodec;
import dev.gantry.contracts.jobs.JobQueued;
import dev.gantry.kit.sql.ValuesList;
import io.quarkus.hibernate.reactive.panache.Panache;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.UUID;
import org.hibernate.reactive.mutiny.Mutiny;

/**
 * Stores a run of {@code jobs.queued} events in one statement, inside the caller's transaction: it
 * records their ids in the inbox, skips the duplicates, the jobs that ended (tombstone) and those
 * already running, upserts the rest into the pending set and signals each stored job
 * ({@link QueuedJobSignal}, delivered at commit). Event by event that was about six round trips,
 * which held the consumer to ~25-30 jobs/s under a burst (issue 18 item 6).
 * <p>
 * Its effect is that of storing the events one after another: a job queued twice in the run keeps
 * its last event. Pod gangs' jobs are not stored here (they need their gang looked up).
 */
@ApplicationScoped
public class QueuedJobsStore {

    /** One {@code jobs.queued}: its event id and its payload with the format's defaults applied. */
    public record Queued(UUID eventId, JobQueued job) {
    }

    /** How many events were new (not in the inbox yet), and how many of those were for an ended job. */
    public record Outcome(int fresh, int late) {
    }

    private static final int COLUMNS = 8;

    public Uni<Outcome> storeAll(List<Queued> run, Instant receivedAt) {
        String values = ValuesList.of(run.size(), true, "uuid", "uuid", "text", "text", "integer", "integer", "text", "timestamptz");
        int received = run.size() * COLUMNS + 1;
        int channel = received + 1;
        // the writable CTEs see the tables as they were before the statement, so every check reads the
        // rows earlier statements of the transaction wrote, never this statement's own
        String sql = "with ev (event_id, job_id, name, queue, priority, total_gpus, spec, submitted_at, ord) as (values " + values + "), "
                + "fresh as (insert into processed_event (event_id, type, processed_at) "
                + "    select distinct event_id, 'jobs.queued', now() from ev on conflict (event_id) do nothing returning event_id), "
                + "latest as (select distinct on (ev.job_id) ev.* from ev join fresh on fresh.event_id = ev.event_id "
                + "    order by ev.job_id, ev.ord desc), "
                + "late as (select l.job_id from latest l where exists (select 1 from ended_job e where e.job_id = l.job_id)), "
                + "stored as (insert into pending_job (job_id, name, queue, priority, total_gpus, spec, submitted_at, received_at) "
                + "    select l.job_id, l.name, l.queue, l.priority, l.total_gpus, l.spec, l.submitted_at, cast(?" + received + " as timestamptz) "
                + "    from latest l where not exists (select 1 from ended_job e where e.job_id = l.job_id) "
                + "    and not exists (select 1 from running_job r where r.job_id = l.job_id) "
                + "    on conflict (job_id) do update set name = excluded.name, queue = excluded.queue, priority = excluded.priority, "
                + "    total_gpus = excluded.total_gpus, spec = excluded.spec, submitted_at = excluded.submitted_at, "
                + "    received_at = excluded.received_at returning job_id) "
                + "select 'stored', cast(s.job_id as text) from stored s, pg_notify(cast(?" + channel + " as text), "
                + "    cast(s.job_id as text) || ' ' || cast(?" + (channel + 1) + " as text)) "
                + "union all select 'fresh', cast(event_id as text) from fresh "
                + "union all select 'late', cast(job_id as text) from late";
        return Panache.getSession().chain(session -> session.flush().chain(() -> {
            Mutiny.SelectionQuery<Object[]> query = session.createNativeQuery(sql, Object[].class);
            for (int i = 0; i < run.size(); i++) {
                int p = i * COLUMNS;
                JobQueued job = run.get(i).job();
                query.setParameter(p + 1, run.get(i).eventId());
                query.setParameter(p + 2, job.jobId());
                query.setParameter(p + 3, job.name());
                query.setParameter(p + 4, job.queue());
                query.setParameter(p + 5, job.priority());
                query.setParameter(p + 6, job.totalGpus());
                query.setParameter(p + 7, EventCodec.toJson(job));
                query.setParameter(p + 8, job.submittedAt().atOffset(ZoneOffset.UTC));
            }
            query.setParameter(received, receivedAt.atOffset(ZoneOffset.UTC));
            query.setParameter(channel, QueuedJobSignal.CHANNEL);
            query.setParameter(channel + 1, Long.toString(receivedAt.toEpochMilli()));
            return query.getResultList();
        })).map(rows -> {
            int fresh = 0;
            int late = 0;
            for (Object[] row : rows) {
                switch (String.valueOf(row[0])) {
                    case "fresh" -> fresh++;
                    case "late" -> late++;
                    default -> {
                    }
                }
            }
            return new Outcome(fresh, late);
        });
    }
}
