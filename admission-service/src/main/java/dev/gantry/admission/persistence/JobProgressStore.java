package dev.gantry.admission.persistence;

import dev.gantry.admission.domain.JobProgress;
import dev.gantry.admission.domain.JobState;
import dev.gantry.admission.domain.PlacementReport;
import dev.gantry.kit.sql.ValuesList;
import io.quarkus.hibernate.reactive.panache.Panache;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.function.Consumer;
import org.hibernate.reactive.mutiny.Mutiny;

/**
 * Applies a run of placement's reports about jobs in a few statements, inside the caller's
 * transaction: the event ids into the inbox (duplicates skipped), the jobs concerned read once and
 * locked, every report applied in memory in the run's order ({@link JobProgress}), the changed jobs
 * and their history steps written back in one statement each. Report by report this was a find, an
 * update and a history insert through entities, about five round trips per event: admission's view
 * lagged placement by a minute under a burst of 2,000 jobs (issue 18 item 6).
 */
@ApplicationScoped
public class JobProgressStore {

    /** One report: which event, about which job, in placement's order, what it says, what else it changes. */
    public record Report(UUID eventId, String type, UUID jobId, long sequence, PlacementReport report, String reason,
            Consumer<JobProgress> onApplied) {
    }

    public enum Result { APPLIED, DUPLICATE, UNKNOWN_JOB, STALE }

    /**
     * What became of a report: {@code job} is the job after it (null for a duplicate or an unknown job),
     * {@code step} the step it added to the job's history.
     */
    public record Applied(Report report, Result result, JobProgress job, Optional<JobProgress.Step> step) {
    }

    public Uni<List<Applied>> applyAll(List<Report> run) {
        // what the transaction changed through entities before (a gang's event in the same batch) is
        // written first, and the entities are let go after, so neither side reads the other's stale copy
        return Panache.getSession().chain(session -> session.flush()
                .chain(() -> firstSeen(session, run))
                .chain(fresh -> lockJobs(session, fresh, run).map(jobs -> applyInOrder(run, fresh, jobs)))
                .call(applied -> write(session, applied))
                .invoke(session::clear));
    }

    private static Uni<Set<UUID>> firstSeen(Mutiny.Session session, List<Report> run) {
        Map<UUID, String> events = new LinkedHashMap<>();
        run.forEach(r -> events.putIfAbsent(r.eventId(), r.type()));
        Mutiny.SelectionQuery<Object> insert = session.createNativeQuery("insert into processed_event (event_id, type, processed_at) "
                + "select event_id, type, now() from (values " + ValuesList.of(events.size(), false, "uuid", "text")
                + ") as v (event_id, type) on conflict (event_id) do nothing returning cast(event_id as text)", Object.class);
        int p = 1;
        for (Map.Entry<UUID, String> e : events.entrySet()) {
            insert.setParameter(p++, e.getKey());
            insert.setParameter(p++, e.getValue());
        }
        return insert.getResultList().map(rows -> {
            Set<UUID> fresh = new HashSet<>();
            rows.forEach(row -> fresh.add(UUID.fromString(String.valueOf(row))));
            return fresh;
        });
    }

    private static Uni<Map<UUID, JobProgress>> lockJobs(Mutiny.Session session, Set<UUID> fresh, List<Report> run) {
        Set<UUID> ids = new LinkedHashSet<>();
        run.stream().filter(r -> fresh.contains(r.eventId())).forEach(r -> ids.add(r.jobId()));
        if (ids.isEmpty()) {
            return Uni.createFrom().item(Map.of());
        }
        StringBuilder params = new StringBuilder();
        for (int i = 1; i <= ids.size(); i++) {
            params.append(i == 1 ? "" : ", ").append("cast(?").append(i).append(" as uuid)");
        }
        // locked in id order, so two transactions over overlapping jobs cannot deadlock
        Mutiny.SelectionQuery<Object[]> select = session.createNativeQuery("select cast(id as text), state, pending_reason, "
                + "placement_sequence, attempts, placement, exit_code, cast(extract(epoch from submitted_at) * 1000000 as bigint) "
                + "from job where id in (" + params + ") order by id for update", Object[].class);
        int p = 1;
        for (UUID id : ids) {
            select.setParameter(p++, id);
        }
        return select.getResultList().map(rows -> {
            Map<UUID, JobProgress> jobs = new LinkedHashMap<>();
            for (Object[] row : rows) {
                UUID id = UUID.fromString(String.valueOf(row[0]));
                long micros = ((Number) row[7]).longValue();
                jobs.put(id, new JobProgress(id, Instant.EPOCH.plusNanos(micros * 1000), JobState.valueOf(String.valueOf(row[1])),
                        (String) row[2], ((Number) row[3]).longValue(), ((Number) row[4]).intValue(), (String) row[5],
                        row[6] == null ? null : ((Number) row[6]).intValue()));
            }
            return jobs;
        });
    }

    private static List<Applied> applyInOrder(List<Report> run, Set<UUID> fresh, Map<UUID, JobProgress> jobs) {
        Set<UUID> seen = new HashSet<>();
        List<Applied> results = new ArrayList<>(run.size());
        for (Report r : run) {
            if (!fresh.contains(r.eventId()) || !seen.add(r.eventId())) {
                results.add(new Applied(r, Result.DUPLICATE, null, Optional.empty()));
                continue;
            }
            JobProgress job = jobs.get(r.jobId());
            if (job == null) {
                results.add(new Applied(r, Result.UNKNOWN_JOB, null, Optional.empty()));
                continue;
            }
            JobProgress.Outcome outcome = job.apply(r.report(), r.sequence(), r.reason(), r.type(), r.onApplied());
            results.add(new Applied(r, outcome.stale() ? Result.STALE : Result.APPLIED, job, outcome.step()));
        }
        return results;
    }

    private static Uni<Void> write(Mutiny.Session session, List<Applied> applied) {
        Set<JobProgress> changed = new LinkedHashSet<>();
        List<Applied> steps = new ArrayList<>();
        for (Applied a : applied) {
            if (a.job() != null && a.job().changed()) {
                changed.add(a.job());
            }
            if (a.step().isPresent()) {
                steps.add(a);
            }
        }
        Instant now = Instant.now();
        return updateJobs(session, changed, now).chain(() -> recordSteps(session, steps, now));
    }

    private static Uni<Void> updateJobs(Mutiny.Session session, Set<JobProgress> jobs, Instant now) {
        if (jobs.isEmpty()) {
            return Uni.createFrom().voidItem();
        }
        // version moves as an entity update would move it, so an entity read before this write fails to overwrite it
        Mutiny.Query<Object> update = session.createNativeQuery("update job j set state = v.state, pending_reason = v.reason, "
                + "placement_sequence = v.seq, attempts = v.attempts, placement = v.placement, exit_code = v.exit_code, "
                + "updated_at = v.at, version = j.version + 1 "
                + "from (values " + ValuesList.of(jobs.size(), false, "uuid", "text", "text", "bigint", "integer", "text", "integer", "timestamptz")
                + ") as v (id, state, reason, seq, attempts, placement, exit_code, at) where j.id = v.id");
        int p = 1;
        for (JobProgress job : jobs) {
            update.setParameter(p++, job.id());
            update.setParameter(p++, job.state().name());
            update.setParameter(p++, job.pendingReason());
            update.setParameter(p++, job.placementSequence());
            update.setParameter(p++, job.attempts());
            update.setParameter(p++, job.placement());
            update.setParameter(p++, job.exitCode());
            update.setParameter(p++, now.atOffset(ZoneOffset.UTC));
        }
        return update.executeUpdate().replaceWithVoid();
    }

    private static Uni<Void> recordSteps(Mutiny.Session session, List<Applied> steps, Instant now) {
        if (steps.isEmpty()) {
            return Uni.createFrom().voidItem();
        }
        // one multi-row insert numbers its rows in this order, the order the history is read in
        Mutiny.Query<Object> insert = session.createNativeQuery("insert into job_history (job_id, at, state, reason, source) values "
                + ValuesList.of(steps.size(), false, "uuid", "timestamptz", "text", "text", "text"));
        int p = 1;
        for (Applied a : steps) {
            JobProgress.Step step = a.step().orElseThrow();
            insert.setParameter(p++, a.job().id());
            insert.setParameter(p++, now.atOffset(ZoneOffset.UTC));
            insert.setParameter(p++, step.state().name());
            insert.setParameter(p++, step.reason());
            insert.setParameter(p++, step.source());
        }
        return insert.executeUpdate().replaceWithVoid();
    }
}
