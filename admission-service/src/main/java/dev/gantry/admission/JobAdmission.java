package dev.gantry.admission;

import dev.gantry.admission.domain.Caller;
import dev.gantry.admission.domain.JobSpec;
import dev.gantry.admission.domain.JobState;
import dev.gantry.admission.persistence.IdempotencyKey;
import dev.gantry.admission.persistence.JobEntity;
import dev.gantry.admission.persistence.JobHistoryEntry;
import dev.gantry.admission.streams.JobBoard;
import dev.gantry.admission.quota.AdmissionCheck;
import dev.gantry.admission.quota.QuotaRefusedRequestException;
import dev.gantry.admission.quota.QuotaUnavailableException;
import dev.gantry.contracts.events.EventCodec;
import dev.gantry.contracts.events.Subjects;
import dev.gantry.contracts.jobs.JobCancelled;
import dev.gantry.contracts.jobs.JobQueued;
import dev.gantry.contracts.validation.FieldViolation;
import dev.gantry.kit.outbox.Outbox;
import dev.gantry.kit.problem.InvalidRequestException;
import dev.gantry.kit.problem.Problem;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.hibernate.reactive.panache.Panache;
import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Tuple;
import org.hibernate.reactive.mutiny.Mutiny;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.ws.rs.NotFoundException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.HexFormat;
import java.util.List;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Accepts, reads and cancels jobs. A submission is validated, checked with quota-service, and then
 * stored together with its {@code jobs.queued} event (and its idempotency key, if any) in one
 * transaction, so the event exists exactly when the job does and a retry never makes a second job.
 */
@ApplicationScoped
public class JobAdmission {

    /** A job and whether this request created it or replayed an earlier one with the same key. */
    public record Submitted(JobEntity job, boolean replayed) {
    }

    private static final Duration WATCH_POLL = Duration.ofMillis(500);

    private final Outbox outbox;
    private final AdmissionCheck admissionCheck;
    private final MeterRegistry registry;
    private final Mutiny.SessionFactory sessions;
    private final JobBoard board;
    private final Pool pool;

    /**
     * A submission's rows in one statement: the job, its first history entry, its idempotency key
     * (when it has one: the select yields no row otherwise) and its {@code jobs.queued} outbox row.
     * One statement is one transaction: all four are stored or none is.
     */
    private static final String STORE_SQL = """
            with j as (
              insert into job (id, name, queue, owner, team, priority_class, priority, total_gpus, state, spec, submitted_at,
                               updated_at, placement_sequence, version)
              values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $11, 0, 0)),
            h as (
              insert into job_history (job_id, at, state, reason, source) values ($1, $11, $9, null, 'submitted')),
            k as (
              insert into idempotency_key (owner, key, request_hash, job_id, created_at)
              select $4, $12::text, $13::text, $1, $11 where $12::text is not null)
            """ + Outbox.INSERT_SQL + " values ($14, $15, $16, $17, $18, $19)";

    public JobAdmission(Outbox outbox, AdmissionCheck admissionCheck, MeterRegistry registry, Mutiny.SessionFactory sessions,
            JobBoard board, Pool pool) {
        this.board = board;
        this.pool = pool;
        this.outbox = outbox;
        this.admissionCheck = admissionCheck;
        this.registry = registry;
        this.sessions = sessions;
    }

    public Uni<Submitted> submit(JobSpec requested, Caller caller, String idempotencyKey) {
        if (idempotencyKey != null && (idempotencyKey.isBlank() || idempotencyKey.length() > 200)) {
            throw InvalidRequestException.badRequest("Idempotency-Key", "must be 1..200 characters");
        }
        JobSpec spec = requested.withTeam(chargedTeam(requested, caller));
        // only a request that can be replayed needs its fingerprint
        String requestHash = idempotencyKey == null ? null : sha256(EventCodec.toJson(spec));
        List<FieldViolation> outOfRange = spec.quantityViolations();
        if (!outOfRange.isEmpty()) {
            count("invalid");
            throw InvalidRequestException.badRequest(outOfRange);
        }
        List<FieldViolation> violations = spec.violations();
        if (!violations.isEmpty()) {
            count("invalid");
            throw InvalidRequestException.unprocessable(violations);
        }
        // an event the broker would refuse could never reach placement: refused before quota is asked or anything stored
        // the job's id from the start: quota reserves its place under it, and a retried check is the same job
        UUID jobId = UUID.randomUUID();
        outbox.requireFits(Subjects.JOBS_QUEUED, jobId.toString(),
                queuedEvent(jobId, caller.user(), spec.priority(), Instant.now(), spec));
        return replayOf(caller, idempotencyKey, requestHash)
                .chain(replayed -> replayed != null
                        ? Uni.createFrom().item(new Submitted(replayed, true))
                        : admissionCheck.check(spec, caller, jobId)
                                .onFailure(QuotaRefusedRequestException.class).transform(e -> new InvalidRequestException(
                                        ((QuotaRefusedRequestException) e).status() == 400 ? 400 : 422, e.getMessage(), List.of()))
                                .onFailure(f -> !(f instanceof InvalidRequestException)).transform(QuotaUnavailableException::new)
                                .chain(verdict -> {
                            if (!verdict.allowed()) {
                                count("rejected");
                                throw new InvalidRequestException(422, verdict.reason() + ": " + verdict.message(),
                                        List.of(new Problem.FieldError("queue", verdict.message())));
                            }
                            int priority = verdict.priority() != null ? verdict.priority() : spec.priority();
                            return store(jobId, spec, priority, caller, idempotencyKey, requestHash);
                        }))
                .invoke(s -> count(s.replayed() ? "replayed" : "accepted"));
    }

    /** The submitter's team: the one named, which they must belong to, or their only team. */
    private static String chargedTeam(JobSpec spec, Caller caller) {
        if (spec.team() != null) {
            if (!caller.canSee(spec.team())) {
                throw new InvalidRequestException(403, "you are not a member of team " + spec.team(), List.of());
            }
            return spec.team();
        }
        if (caller.teams().size() == 1) {
            return caller.teams().iterator().next();
        }
        throw InvalidRequestException.unprocessable("team", caller.teams().isEmpty()
                ? "you belong to no team; ask an admin to add you to one"
                : "required: you belong to several teams " + caller.teams().stream().sorted().toList());
    }

    private static Uni<JobEntity> replayOf(Caller caller, String key, String requestHash) {
        if (key == null) {
            return Uni.createFrom().nullItem();
        }
        return Panache.withSession(() -> IdempotencyKey.<IdempotencyKey>findById(new IdempotencyKey.Id(caller.user(), key))
                .chain(found -> {
                    if (found == null) {
                        return Uni.createFrom().nullItem();
                    }
                    if (!found.requestHash.equals(requestHash)) {
                        throw new InvalidRequestException(409,
                                "Idempotency-Key " + key + " was already used for a different request", List.of());
                    }
                    return JobEntity.<JobEntity>findById(found.jobId);
                }));
    }

    /**
     * Stores the job with plain SQL, not entities (the submit path is the hottest there is: Hibernate's
     * session, flush and four entity inserts were the largest share of its CPU): one statement to take
     * the outbox row's id, one to insert everything; the relay is woken once it is committed.
     */
    private Uni<Submitted> store(UUID jobId, JobSpec spec, int priority, Caller caller, String key, String requestHash) {
        Instant now = Instant.now();
        JobEntity job = new JobEntity();
        job.id = jobId;
        job.name = spec.name();
        job.queue = spec.queue();
        job.team = spec.team();
        job.owner = caller.user();
        job.priorityClass = spec.priorityClass();
        job.priority = priority;
        job.totalGpus = spec.totalGpus();
        job.state = JobState.QUEUED;
        job.spec = EventCodec.toJson(spec);
        job.submittedAt = now;
        job.updatedAt = now;
        return outbox.prepare(Subjects.JOBS_QUEUED, job.id.toString(), queuedEvent(job, spec))
                .chain(event -> pool.preparedQuery(STORE_SQL).execute(event.addTo(Tuple.tuple()
                        .addUUID(job.id).addString(job.name).addString(job.queue).addString(job.owner).addString(job.team)
                        .addString(job.priorityClass).addInteger(job.priority).addInteger(job.totalGpus)
                        .addString(job.state.name()).addString(job.spec).addOffsetDateTime(now.atOffset(ZoneOffset.UTC))
                        .addString(key).addString(key == null ? null : requestHash))))
                .invoke(outbox::appended)
                .map(stored -> new Submitted(job, false))
                // two concurrent retries with the same key: the loser returns the winner's job
                .onFailure(JobAdmission::isDuplicateKey).recoverWithUni(() -> replayOf(caller, key, requestHash)
                        .map(first -> new Submitted(first, true)));
    }

    private static boolean isDuplicateKey(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause()) {
            if (String.valueOf(t.getMessage()).contains("idempotency_key_pkey")) {
                return true;
            }
        }
        return false;
    }

    static JobQueued queuedEvent(JobEntity job, JobSpec spec) {
        return queuedEvent(job.id, job.owner, job.priority, job.submittedAt, spec);
    }

    private static JobQueued queuedEvent(UUID id, String owner, int priority, Instant submittedAt, JobSpec spec) {
        return new JobQueued(id, spec.name(), spec.queue(), owner, priority, submittedAt, spec.minAvailable(),
                spec.taskGroups().stream()
                        .map(g -> new JobQueued.TaskGroup(g.name(), g.replicas(), g.gpusPerReplica(), g.gpuMilli(), g.cpuMillis(), g.memoryMiB(),
                                g.image(), g.command() == null || g.command().isEmpty() ? null : g.command(), g.workingDir(),
                                g.env() == null || g.env().isEmpty() ? null : g.env(), g.migProfile()))
                        .toList(),
                spec.gpuModels(), spec.gpuTopology(), spec.network(), spec.requireInfiniBand(), spec.nodeSelector(),
                spec.tolerations(), spec.preemptible(), spec.checkpointable(), spec.estimatedRuntimeSeconds(),
                spec.checkpointGraceSeconds(), spec.migratable());
    }

    /** The job if the caller may see it; otherwise 404, whether it exists or not (no existence leak). */
    public Uni<JobEntity> find(UUID id, Caller caller) {
        return Panache.withSession(() -> JobEntity.<JobEntity>findById(id))
                .map(job -> {
                    if (job == null || !caller.canSee(job.team)) {
                        throw new NotFoundException("no job with id " + id);
                    }
                    return job;
                });
    }

    /**
     * The job as stored right now, for followers that poll: a stateless session per read, so the
     * request's session cache never hands back a stale state.
     */
    public Uni<JobEntity> current(UUID id, Caller caller) {
        return sessions.withStatelessSession(session -> session.get(JobEntity.class, id))
                .map(job -> {
                    if (job == null || !caller.canSee(job.team)) {
                        throw new NotFoundException("no job with id " + id);
                    }
                    return job;
                });
    }

    /**
     * The job now, then each change of its state, pending reason or attempt (placed again), until it ends. After the first
     * read the job is looked up on the shared {@link JobBoard}, which reads every watched job in one
     * query per interval, so a thousand open watches cost one query, not a thousand; it reads the
     * database, so every replica's followers see every change, whichever replica made it.
     */
    public Multi<JobEntity> watch(UUID id, Caller caller) {
        AtomicBoolean ended = new AtomicBoolean();
        // Hibernate Reactive needs the caller's Vert.x context; ticks fire on another thread
        Context context = Vertx.currentContext();
        Multi<JobEntity> changes = Multi.createFrom().ticks().every(WATCH_POLL)
                .emitOn(task -> context.runOnContext(ignored -> task.run()))
                .onItem().transformToUniAndConcatenate(tick -> board.latest(id))
                .filter(Objects::nonNull);
        return Multi.createBy().concatenating().streams(current(id, caller).toMulti(), changes)
                .onSubscription().invoke(() -> board.watch(id))
                .onTermination().invoke(() -> board.unwatch(id))
                // let the final state through, then complete (before de-duplication, which would swallow the repeats)
                .select().first(job -> {
                    boolean emit = !ended.get();
                    ended.compareAndSet(false, job.state.isFinal());
                    return emit;
                })
                .skip().repetitions((a, b) -> a.state == b.state && Objects.equals(a.pendingReason, b.pendingReason)
                        && a.attempts == b.attempts ? 0 : 1)
                .onFailure(NotFoundException.class).recoverWithCompletion();
    }

    /** What happened to the job, oldest first, if the caller may see it. */
    public Uni<List<JobHistoryEntry>> history(UUID id, Caller caller) {
        return find(id, caller).chain(job -> Panache.withSession(() -> JobHistoryEntry.of(job.id)));
    }

    public Uni<JobEntity> cancel(UUID id, Caller caller) {
        return Panache.withTransaction(() -> JobEntity.<JobEntity>findById(id).chain(job -> {
            if (job == null || !caller.canSee(job.team)) {
                throw new NotFoundException("no job with id " + id);
            }
            if (!job.state.canBecome(JobState.CANCELLED)) {
                throw new InvalidRequestException(409, "job " + job.name + " is " + job.state + " and can no longer be cancelled",
                        List.of());
            }
            job.state = JobState.CANCELLED;
            job.pendingReason = null;
            job.updatedAt = Instant.now();
            return JobHistoryEntry.record(job.id, JobState.CANCELLED, "cancelled by " + caller.user(), "cancelled")
                    .chain(() -> outbox.append(Subjects.JOBS_CANCELLED, job.id.toString(),
                            new JobCancelled(job.id, job.queue, caller.user(), job.updatedAt)))
                    .replaceWith(job);
        }));
    }

    /** One page of the jobs the caller may see, newest first; {@code after} is the last job of the previous page. */
    public Uni<List<JobEntity>> list(JobQuery query, Caller caller) {
        return Panache.withSession(() -> JobEntity.<JobEntity>find(query.hql(caller), query.parameters(caller))
                .page(0, query.limit()).list());
    }

    private static String sha256(String text) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    private void count(String outcome) {
        registry.counter("gantry.admission.submissions", "outcome", outcome).increment();
    }
}
