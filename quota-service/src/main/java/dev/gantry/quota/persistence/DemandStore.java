package dev.gantry.quota.persistence;

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
 * Stores a run of {@code jobs.queued} (pending demand) or of {@code placements.bound} (allocations)
 * in one statement, inside the caller's transaction: the event ids into the inbox (duplicates
 * skipped) and the rows, by the rules of one event at a time. Event by event that was a find per
 * table and an entity write, about five round trips: quota's consumers were the largest user of its
 * CPU under a burst of 2,000 jobs (issue 18 item 6).
 * <p>
 * A job that appears twice in a run keeps its last event; the run's checks read what earlier
 * statements of the transaction wrote, never this statement's own rows.
 */
@ApplicationScoped
public class DemandStore {

    /** A {@code jobs.queued}: the job's demand as quota counts it. */
    public record Queued(UUID eventId, UUID jobId, String queue, String owner, int gpus, long cpuMillis, long memoryMiB,
            Instant queuedAt) {
    }

    /** A {@code placements.bound}: what the job holds from then on. */
    public record Bound(UUID eventId, UUID jobId, String queue, String owner, int gpus, String gpuModel, long cpuMillis,
            long memoryMiB, Instant boundAt) {
    }

    /** How many events were new, and how many of those changed nothing (their job had ended, or was released since). */
    public record Outcome(int fresh, int stale) {
    }

    /** Pending demand, unless the job already holds GPUs or has ended. */
    public Uni<Outcome> queuedAll(List<Queued> run) {
        String values = ValuesList.of(run.size(), true, "uuid", "uuid", "text", "text", "integer", "bigint", "bigint", "timestamptz");
        String sql = "with ev (event_id, job_id, queue, owner, gpus, cpu_millis, memory_mib, queued_at, ord) as (values " + values + "), "
                + "fresh as (insert into processed_event (event_id, type, processed_at) "
                + "    select distinct event_id, 'jobs.queued', now() from ev on conflict (event_id) do nothing returning event_id), "
                + "latest as (select distinct on (ev.job_id) ev.* from ev join fresh on fresh.event_id = ev.event_id "
                + "    order by ev.job_id, ev.ord desc), "
                + "waiting as (select l.* from latest l where not exists (select 1 from allocation a where a.job_id = l.job_id)), "
                + "stored as (insert into pending_job (job_id, queue, owner, gpus, cpu_millis, memory_mib, queued_at) "
                + "    select job_id, queue, owner, gpus, cpu_millis, memory_mib, queued_at from waiting w "
                + "    where not exists (select 1 from ended_job e where e.job_id = w.job_id) "
                + "    on conflict (job_id) do update set queue = excluded.queue, owner = excluded.owner, gpus = excluded.gpus, "
                + "    cpu_millis = excluded.cpu_millis, memory_mib = excluded.memory_mib, queued_at = excluded.queued_at returning job_id), "
                // the admission check's reservation has served its purpose once the job's event is here
                + "confirmed as (delete from admission_reservation r using latest l where r.job_id = l.job_id) "
                + "select (select count(*) from fresh), "
                + "    (select count(*) from waiting w where exists (select 1 from ended_job e where e.job_id = w.job_id))";
        return Panache.getSession().chain(session -> session.flush().chain(() -> {
            Mutiny.SelectionQuery<Object[]> query = session.createNativeQuery(sql, Object[].class);
            int p = 1;
            for (Queued q : run) {
                query.setParameter(p++, q.eventId());
                query.setParameter(p++, q.jobId());
                query.setParameter(p++, q.queue());
                query.setParameter(p++, q.owner());
                query.setParameter(p++, q.gpus());
                query.setParameter(p++, q.cpuMillis());
                query.setParameter(p++, q.memoryMiB());
                query.setParameter(p++, q.queuedAt().atOffset(ZoneOffset.UTC));
            }
            return query.getSingleResult().map(DemandStore::outcome).invoke(session::clear);
        }));
    }

    /** Allocations, unless the job's release is newer than the bind; a bound job is no longer pending. */
    public Uni<Outcome> boundAll(List<Bound> run) {
        String values = ValuesList.of(run.size(), true, "uuid", "uuid", "text", "text", "integer", "text", "bigint", "bigint", "timestamptz");
        String sql = "with ev (event_id, job_id, queue, owner, gpus, gpu_model, cpu_millis, memory_mib, bound_at, ord) as (values "
                + values + "), "
                + "fresh as (insert into processed_event (event_id, type, processed_at) "
                + "    select distinct event_id, 'placements.bound', now() from ev on conflict (event_id) do nothing returning event_id), "
                + "latest as (select distinct on (ev.job_id) ev.* from ev join fresh on fresh.event_id = ev.event_id "
                + "    order by ev.job_id, ev.ord desc), "
                + "holding as (select l.* from latest l where not exists "
                + "    (select 1 from released_job r where r.job_id = l.job_id and l.bound_at <= r.released_at)), "
                + "stored as (insert into allocation (job_id, queue, owner, gpus, gpu_model, cpu_millis, memory_mib, bound_at) "
                + "    select job_id, queue, owner, gpus, gpu_model, cpu_millis, memory_mib, bound_at from holding "
                + "    on conflict (job_id) do update set queue = excluded.queue, owner = excluded.owner, gpus = excluded.gpus, "
                + "    gpu_model = excluded.gpu_model, cpu_millis = excluded.cpu_millis, memory_mib = excluded.memory_mib, "
                + "    bound_at = excluded.bound_at returning job_id), "
                + "unpending as (delete from pending_job p using holding h where p.job_id = h.job_id returning p.job_id) "
                // every data-modifying part runs whether or not the final select reads it
                + "select (select count(*) from fresh), (select count(*) from latest) - (select count(*) from holding)";
        return Panache.getSession().chain(session -> session.flush().chain(() -> {
            Mutiny.SelectionQuery<Object[]> query = session.createNativeQuery(sql, Object[].class);
            int p = 1;
            for (Bound b : run) {
                query.setParameter(p++, b.eventId());
                query.setParameter(p++, b.jobId());
                query.setParameter(p++, b.queue());
                query.setParameter(p++, b.owner());
                query.setParameter(p++, b.gpus());
                query.setParameter(p++, b.gpuModel());
                query.setParameter(p++, b.cpuMillis());
                query.setParameter(p++, b.memoryMiB());
                query.setParameter(p++, b.boundAt().atOffset(ZoneOffset.UTC));
            }
            return query.getSingleResult().map(DemandStore::outcome).invoke(session::clear);
        }));
    }

    private static Outcome outcome(Object[] row) {
        return new Outcome(((Number) row[0]).intValue(), ((Number) row[1]).intValue());
    }
}
