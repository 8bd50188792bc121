package dev.gantry.placement.window;

import dev.gantry.contracts.events.EventCodec;
import dev.gantry.contracts.events.Subjects;
import dev.gantry.contracts.jobs.JobQueued;
import dev.gantry.contracts.placements.PlacementBound;
import dev.gantry.contracts.placements.PlacementReleased;
import dev.gantry.kit.outbox.Outbox;
import dev.gantry.placement.cluster.ClusterActionException;
import dev.gantry.placement.cluster.ClusterActuator;
import dev.gantry.placement.cluster.LeaderFence;
import dev.gantry.placement.cluster.Leadership;
import dev.gantry.placement.engine.domain.Placement;
import dev.gantry.placement.engine.domain.Plan;
import dev.gantry.placement.engine.domain.Preemption;
import dev.gantry.placement.engine.domain.TaskPlacement;
import dev.gantry.placement.persistence.Allocation;
import dev.gantry.placement.persistence.ClusterGang;
import dev.gantry.placement.persistence.JobPreemption;
import dev.gantry.placement.persistence.PendingJob;
import dev.gantry.placement.persistence.RunningJobRecord;
import io.quarkus.hibernate.reactive.panache.Panache;
import io.quarkus.scheduler.Scheduled;
import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.core.Vertx;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.jboss.logging.Logger;

/**
 * Applies a validated plan, job by job. The decision is recorded first, each job in one
 * transaction with its event in the outbox, so a restart resumes without double-booking; then the
 * {@link ClusterActuator} acts on it (kubernetes mode; in standalone mode the rows are the outcome).
 * <ul>
 * <li>Preemptions first. A victim placed again after an earlier preemption is protected for
 * {@code gantry.placement.preemption.protection} and is not touched. A checkpointable victim is
 * told first ({@code placements.preempted}, released at the end of its grace period) and keeps its
 * GPUs for {@code gantry.placement.preemption.grace-period} (its pods are evicted with that grace);
 * the preemptor is placed by a later window once they are free. Any other victim is released at
 * once. Either way it returns to the pending set with its original submission time.</li>
 * <li>Placements: every task's allocation, the job leaves the pending set, {@code placements.bound};
 * a gang is written whole or not at all. Then its pods are created and bound, all or none: on
 * failure what was created is deleted, the allocation released, and the job requeued (or failed,
 * when retrying cannot help) with {@code placements.failed}.</li>
 * </ul>
 * A job cancelled or a GPU taken while the window was planning makes that job's transaction write
 * nothing; the next window plans it again. Only the leading replica applies plans. Migrations are
 * not applied yet.
 */
@ApplicationScoped
public class Binder {

    private static final Logger LOG = Logger.getLogger(Binder.class);
    /** Rows per batched statement when a plan is recorded. */
    private static final int WRITE_BATCH = 100;

    private final Outbox outbox;
    private final StandaloneExecutor executor;
    private final ClusterActuator cluster;
    private final Leadership leadership;
    private final LeaderFence fence;
    private final Vertx vertx;
    private final Duration gracePeriod;
    private final Duration protection;
    private final String namespace;
    /** Jobs whose pods this replica is launching right now, so a relaunch never races the binder's own launch. */
    private final Set<UUID> launching = ConcurrentHashMap.newKeySet();

    public Binder(Outbox outbox, StandaloneExecutor executor, ClusterActuator cluster, Leadership leadership, LeaderFence fence, Vertx vertx,
            @ConfigProperty(name = "gantry.placement.preemption.grace-period", defaultValue = "30s") Duration gracePeriod,
            @ConfigProperty(name = "gantry.placement.preemption.protection", defaultValue = "5m") Duration protection,
            @ConfigProperty(name = "gantry.placement.kubernetes.namespace", defaultValue = "gantry") String namespace) {
        this.outbox = outbox;
        this.executor = executor;
        this.cluster = cluster;
        this.leadership = leadership;
        this.fence = fence;
        this.vertx = vertx;
        this.gracePeriod = gracePeriod;
        this.protection = protection;
        this.namespace = namespace;
    }

    /** Applies the plan; the item is the number of jobs placed (0 on a replica that does not lead). */
    public Uni<Integer> apply(Plan plan, Map<String, String> gpuModelByNode) {
        if (!leadership.leading()) {
            return Uni.createFrom().item(0);
        }
        if (!plan.migrations().isEmpty()) {
            LOG.infof("plan has %d migrations; not applied (the binder does not migrate yet)", plan.migrations().size());
        }
        return preemptAll(plan.preemptions()).chain(() -> bindAll(plan.placements(), gpuModelByNode));
    }

    /**
     * Turns on statement batching for this session: the inserts, updates and deletes of a plan go to
     * PostgreSQL a batch per table instead of a round trip per row.
     */
    private static Uni<Void> batching() {
        return Panache.getSession().invoke(session -> session.setBatchSize(WRITE_BATCH)).replaceWithVoid();
    }

    private static <T> Map<UUID, T> byJob(List<T> rows, java.util.function.Function<T, UUID> jobId) {
        Map<UUID, T> map = new HashMap<>();
        rows.forEach(r -> map.put(jobId.apply(r), r));
        return map;
    }

    /** What a preemption did: nothing, released at once, or told and still holding its GPUs until a deadline. */
    private record Preempted(boolean done, Duration grace, ClusterActuator.GangRef gang) {
        static final Preempted NOTHING = new Preempted(false, Duration.ZERO, null);
    }

    /**
     * A plan's victims, recorded in one transaction: one read per table for all of them and the
     * writes batched, so a window that preempts many jobs pays a few round trips, not ~10 per job.
     * Should that transaction fail, each victim is preempted on its own, as {@link #preempt} does.
     */
    Uni<Void> preemptAll(List<Preemption> preemptions) {
        if (preemptions.size() <= 1) {
            return preemptions.isEmpty() ? Uni.createFrom().voidItem() : preempt(preemptions.get(0)).replaceWithVoid();
        }
        return Panache.withTransaction(() -> fence.guard().chain(() -> startPreemptions(preemptions)))
                .chain(started -> Multi.createFrom().iterable(started)
                        .onItem().transformToUniAndConcatenate(this::evictIfToldOrReleased)
                        .collect().asList().replaceWithVoid())
                .onFailure(e -> !(e instanceof LeaderFence.DeposedException)).recoverWithUni(e -> {
                    LOG.warnf("recording %d preemptions together failed, preempting one at a time: %s", preemptions.size(), e.toString());
                    return Multi.createFrom().iterable(preemptions).onItem().transformToUniAndConcatenate(this::preempt)
                            .collect().asList().replaceWithVoid();
                });
    }

    Uni<Boolean> preempt(Preemption preemption) {
        UUID jobId = UUID.fromString(preemption.job());
        return Panache.withTransaction(() -> fence.guard().chain(() -> startPreemption(jobId, preemption.reason())))
                .call(this::evictIfToldOrReleased)
                .map(Preempted::done)
                .onFailure().recoverWithItem(e -> {
                    LOG.warnf("preempting %s failed, left running: %s", jobId, e.toString());
                    return false;
                });
    }

    /** The pods of a recorded preemption are evicted (with its grace, if it has one); a failure is left to the grace's end. */
    private Uni<Void> evictIfToldOrReleased(Preempted p) {
        if (!p.done() || p.gang() == null) {
            return Uni.createFrom().voidItem();
        }
        return act(() -> cluster.evict(p.gang(), p.grace()))
                .onFailure().invoke(e -> LOG.warnf("evicting the pods of %s failed (deleted when its grace ends): %s",
                        p.gang().jobId(), e.toString()))
                .onFailure().recoverWithNull();
    }

    private Uni<Preempted> startPreemption(UUID jobId, String reason) {
        return RunningJobRecord.<RunningJobRecord>findById(jobId).chain(job -> job == null || !preemptible(job, Instant.now())
                ? Uni.createFrom().item(Preempted.NOTHING)
                : JobPreemption.<JobPreemption>findById(jobId).chain(count -> gangRef(jobId).chain(gang -> {
                    Instant now = Instant.now();
                    Writes writes = new Writes();
                    countPreemption(jobId, count, now, writes);
                    if (tellsFirst(job)) {
                        Preempted told = tell(job, reason, now, gang, writes);
                        return writes.apply(outbox).replaceWith(told);
                    }
                    returnToPending(job, Subjects.PLACEMENTS_PREEMPTED, reason, writes);
                    return Allocation.delete("jobId", jobId).chain(() -> writes.apply(outbox))
                            .replaceWith(new Preempted(true, Duration.ZERO, gang));
                })));
    }

    /**
     * The victims of one plan: their running rows, preemption counts and pods read with one query
     * each, the released ones' allocations deleted with one statement, the other writes batched
     * table by table. Inside a transaction.
     */
    private Uni<List<Preempted>> startPreemptions(List<Preemption> preemptions) {
        List<UUID> ids = preemptions.stream().map(p -> UUID.fromString(p.job())).distinct().toList();
        return batching()
                .chain(() -> RunningJobRecord.<RunningJobRecord>list("jobId in ?1", ids))
                .chain(jobs -> JobPreemption.<JobPreemption>list("jobId in ?1", ids)
                        .chain(counts -> gangRefs(ids).chain(gangs -> {
                            Map<UUID, RunningJobRecord> running = byJob(jobs, j -> j.jobId);
                            Map<UUID, JobPreemption> countOf = byJob(counts, c -> c.jobId);
                            Instant now = Instant.now();
                            List<Preempted> started = new ArrayList<>();
                            Writes writes = new Writes();
                            List<UUID> released = new ArrayList<>();
                            for (Preemption preemption : preemptions) {
                                UUID jobId = UUID.fromString(preemption.job());
                                RunningJobRecord job = running.remove(jobId); // removed: a victim named twice is preempted once
                                if (job == null || !preemptible(job, now)) {
                                    continue;
                                }
                                countPreemption(jobId, countOf.get(jobId), now, writes);
                                ClusterActuator.GangRef gang = gangs.get(jobId);
                                if (tellsFirst(job)) {
                                    started.add(tell(job, preemption.reason(), now, gang, writes));
                                } else {
                                    released.add(jobId);
                                    returnToPending(job, Subjects.PLACEMENTS_PREEMPTED, preemption.reason(), writes);
                                    started.add(new Preempted(true, Duration.ZERO, gang));
                                }
                            }
                            Uni<Void> freed = released.isEmpty() ? Uni.createFrom().voidItem()
                                    : Allocation.delete("jobId in ?1", released).replaceWithVoid();
                            return freed.chain(() -> writes.apply(outbox)).replaceWith(started);
                        })));
    }

    /** False for a victim already told (its GPUs free up at its deadline) or protected after a recent preemption. */
    private static boolean preemptible(RunningJobRecord job, Instant now) {
        if (job.evictingUntil != null) {
            return false;
        }
        if (job.protectedUntil != null && job.protectedUntil.isAfter(now)) {
            LOG.infof("job %s not preempted: protected until %s (preempted recently)", job.jobId, job.protectedUntil);
            return false;
        }
        return true;
    }

    /** A checkpointable victim is told first and keeps its GPUs for the grace period. */
    private boolean tellsFirst(RunningJobRecord job) {
        return gracePeriod.isPositive() && EventCodec.fromJson(job.spec, JobQueued.class).checkpointable();
    }

    /** Told first: the victim checkpoints while it still holds its GPUs. */
    private Preempted tell(RunningJobRecord job, String reason, Instant now, ClusterActuator.GangRef gang, Writes writes) {
        job.evictingUntil = now.plus(gracePeriod); // a managed row: updated when the session flushes
        job.evictReason = reason;
        String told = reason + " (checkpoint grace " + gracePeriod.toSeconds() + "s)";
        writes.event(Subjects.PLACEMENTS_PREEMPTED, job.jobId, new PlacementReleased(job.jobId, job.queue, told, job.evictingUntil));
        LOG.infof("job %s preempted, keeps its GPUs until %s: %s", job.jobId, job.evictingUntil, reason);
        return new Preempted(true, gracePeriod, gang);
    }

    /** One more preemption on the job's record ({@code row}: the record so far, a managed row; null for a first). */
    private static void countPreemption(UUID jobId, JobPreemption row, Instant now, Writes writes) {
        JobPreemption p = row != null ? row : new JobPreemption();
        p.jobId = jobId;
        p.lastPreemptedAt = now;
        p.times = row == null ? 1 : row.times + 1;
        if (row == null) {
            writes.insert(p);
        }
    }

    /**
     * Rows to insert and delete and events to append, gathered while a plan is recorded and then
     * written table by table, so that with batching on each table's rows go in one statement batch.
     * The events go last: each outbox insert returns its generated key, which makes Hibernate write
     * every row queued before it, a few at a time.
     */
    private static final class Writes {
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
                for (Event e : events) {
                    chain = chain.chain(() -> outbox.append(e.subject(), e.jobId(), e.payload())).replaceWithVoid();
                }
                return chain;
            });
        }
    }

    /** Victims whose grace period is over give up their GPUs and return to the pending set (their event went out when told). */
    @Scheduled(every = "${gantry.placement.standalone.sweep-interval:1s}", concurrentExecution = Scheduled.ConcurrentExecution.SKIP,
            skipExecutionIf = Scheduled.ApplicationNotRunning.class)
    Uni<Void> finishEvictions() {
        if (!leadership.leading()) {
            return Uni.createFrom().voidItem();
        }
        return Panache.withSession(() -> RunningJobRecord.<RunningJobRecord>list("evictingUntil <= ?1 order by evictingUntil", Instant.now()))
                .onItem().transformToMulti(due -> Multi.createFrom().iterable(due))
                .onItem().transformToUniAndConcatenate(job -> finishEviction(job.jobId).onFailure().recoverWithItem(e -> {
                    LOG.warnf("ending the eviction of %s failed (next sweep retries): %s", job.jobId, e.toString());
                    return false;
                }))
                .collect().last()
                .replaceWithVoid();
    }

    /** Ends a victim's grace: its pods go (if any are left), then its GPUs, in that order. */
    Uni<Boolean> finishEviction(UUID jobId) {
        return Panache.withSession(() -> gangRef(jobId))
                .call(gang -> gang == null ? Uni.createFrom().nullItem() : act(() -> cluster.evict(gang, Duration.ZERO)))
                .chain(gang -> Panache.withTransaction(() -> RunningJobRecord.<RunningJobRecord>findById(jobId).chain(job ->
                        job == null || job.evictingUntil == null ? Uni.createFrom().item(false)
                                : requeue(job, null, job.evictReason == null ? "preempted" : job.evictReason))));
    }

    /**
     * Every job holding GPUs on a node that is gone loses its placement: back to pending with its
     * submission time, {@code placements.requeued}. Call inside a transaction.
     */
    public Uni<Void> failJobsOn(String node) {
        return Allocation.<Allocation>list("node", node).chain(rows -> {
            List<UUID> jobs = rows.stream().map(a -> a.jobId).distinct().toList();
            Uni<Void> chain = Uni.createFrom().voidItem();
            for (UUID jobId : jobs) {
                chain = chain.chain(() -> requeue(jobId, Subjects.PLACEMENTS_REQUEUED, "node " + node + " lost")).replaceWithVoid();
            }
            return chain;
        });
    }

    private Uni<Boolean> requeue(UUID jobId, String subject, String reason) {
        return RunningJobRecord.<RunningJobRecord>findById(jobId)
                .chain(job -> job == null ? Uni.createFrom().item(false) : requeue(job, subject, reason));
    }

    /**
     * A running job released and back in the pending set with its original submission time; the
     * event on {@code subject} (none when null: it went out already). Inside a transaction.
     */
    private Uni<Boolean> requeue(RunningJobRecord job, String subject, String reason) {
        Writes writes = new Writes();
        returnToPending(job, subject, reason, writes);
        return Allocation.delete("jobId", job.jobId).chain(() -> writes.apply(outbox)).replaceWith(true);
    }

    /**
     * The running row to go and a pending row in its place, with the original submission time; its
     * event on {@code subject} (none when null: it went out already). The caller deletes the
     * allocations.
     */
    private static void returnToPending(RunningJobRecord job, String subject, String reason, Writes writes) {
        UUID jobId = job.jobId;
        JobQueued spec = EventCodec.fromJson(job.spec, JobQueued.class);
        PendingJob pending = new PendingJob();
        pending.jobId = jobId;
        pending.name = spec.name();
        pending.queue = spec.queue();
        pending.priority = spec.priority();
        pending.totalGpus = spec.totalGpus();
        pending.spec = job.spec;
        pending.submittedAt = job.submittedAt; // keeps its place in line
        pending.receivedAt = Instant.now();
        writes.delete(job);
        writes.insert(pending);
        if (subject != null) {
            writes.event(subject, jobId, new PlacementReleased(jobId, spec.queue(), reason, Instant.now()));
        }
        LOG.infof("job %s back to pending (%s): %s", jobId, subject == null ? "grace period over" : subject, reason);
    }

    /** The bound gang, for the actuator (null in standalone mode or when nothing was written). */
    private record Bound(boolean written, ClusterActuator.Gang gang) {
    }

    Uni<Boolean> bind(Placement placement, Map<String, String> gpuModelByNode) {
        UUID jobId = UUID.fromString(placement.job());
        boolean mine = launching.add(jobId); // from before the placement is recorded until its pods are launched
        Set<String> nodes = new HashSet<>();
        placement.tasks().forEach(t -> nodes.add(t.node()));
        return Panache.withTransaction(() -> fence.guard().chain(() -> PendingJob.<PendingJob>findById(jobId)).chain(pending -> {
            if (pending == null) {
                LOG.debugf("job %s left the pending set while planning; not bound", jobId);
                return Uni.createFrom().item(new Bound(false, null));
            }
            return Allocation.<Allocation>list("node in ?1", nodes).chain(held -> {
                String conflict = conflict(placement, held);
                if (conflict != null) {
                    LOG.infof("job %s not bound: %s (replanned next window)", jobId, conflict);
                    return Uni.createFrom().item(new Bound(false, null));
                }
                return JobPreemption.<JobPreemption>findById(jobId).chain(preempted -> {
                    Writes writes = new Writes();
                    Recorded recorded = record(pending, placement, gpuModelByNode, preempted != null, held, writes);
                    return writes.apply(outbox).chain(() -> bound(recorded));
                });
            });
        })).chain(this::launchIfWritten)
                .onFailure().recoverWithItem(e -> {
                    LOG.warnf("binding %s failed, left pending: %s", jobId, e.toString());
                    return false;
                })
                .eventually(() -> {
                    if (mine) {
                        launching.remove(jobId);
                    }
                });
    }

    /**
     * A plan's placements, recorded in one transaction: the pending rows, the allocations on the
     * plan's nodes and the preemption records read with one query each for all jobs; each gang
     * checked against what is held, including the gangs recorded before it in the plan, and written
     * whole or skipped; the writes batched, the events appended last. Then the pods, gang by gang.
     * Should the transaction fail, each job is bound on its own, as {@link #bind} does. The item is
     * the number of jobs placed.
     */
    Uni<Integer> bindAll(List<Placement> placements, Map<String, String> gpuModelByNode) {
        if (placements.size() <= 1) {
            return placements.isEmpty() ? Uni.createFrom().item(0)
                    : bind(placements.get(0), gpuModelByNode).map(bound -> bound ? 1 : 0);
        }
        List<UUID> ids = placements.stream().map(p -> UUID.fromString(p.job())).distinct().toList();
        List<UUID> mine = ids.stream().filter(launching::add).toList(); // held until the pods are launched
        return Panache.withTransaction(() -> fence.guard().chain(() -> recordPlacements(placements, ids, gpuModelByNode)))
                .chain(recorded -> Multi.createFrom().iterable(recorded)
                        .onItem().transformToUniAndConcatenate(this::launchIfWritten)
                        .collect().asList()
                        .map(done -> (int) done.stream().filter(Boolean::booleanValue).count()))
                .onFailure(LeaderFence.DeposedException.class).recoverWithUni(e -> {
                    LOG.warnf("%d placements not recorded: %s", placements.size(), e.getMessage());
                    return Uni.createFrom().item(0);
                })
                .onFailure().recoverWithUni(e -> {
                    LOG.warnf("recording %d placements together failed, binding one at a time: %s", placements.size(), e.toString());
                    return Multi.createFrom().iterable(placements).onItem().transformToUniAndConcatenate(p -> bind(p, gpuModelByNode))
                            .collect().asList()
                            .map(done -> (int) done.stream().filter(Boolean::booleanValue).count());
                })
                .eventually(() -> mine.forEach(launching::remove));
    }

    private Uni<List<Bound>> recordPlacements(List<Placement> placements, List<UUID> ids, Map<String, String> gpuModelByNode) {
        Set<String> nodes = new HashSet<>();
        placements.forEach(p -> p.tasks().forEach(t -> nodes.add(t.node())));
        return batching()
                .chain(() -> PendingJob.<PendingJob>list("jobId in ?1", ids))
                .chain(pendings -> Allocation.<Allocation>list("node in ?1", nodes)
                        .chain(heldNow -> JobPreemption.<JobPreemption>list("jobId in ?1", ids).chain(preemptions -> {
                            Map<UUID, PendingJob> pending = byJob(pendings, p -> p.jobId);
                            Set<UUID> preemptedBefore = byJob(preemptions, p -> p.jobId).keySet();
                            List<Allocation> held = new ArrayList<>(heldNow); // grows with each gang recorded
                            Writes writes = new Writes();
                            List<Recorded> recorded = new ArrayList<>();
                            for (Placement placement : placements) {
                                UUID jobId = UUID.fromString(placement.job());
                                PendingJob job = pending.remove(jobId); // removed: a job placed twice is bound once
                                if (job == null) {
                                    LOG.debugf("job %s left the pending set while planning; not bound", jobId);
                                    continue;
                                }
                                String conflict = conflict(placement, held);
                                if (conflict != null) {
                                    LOG.infof("job %s not bound: %s (replanned next window)", jobId, conflict);
                                    continue;
                                }
                                recorded.add(record(job, placement, gpuModelByNode, preemptedBefore.contains(jobId), held, writes));
                            }
                            return writes.apply(outbox).chain(() -> Multi.createFrom().iterable(recorded)
                                    .onItem().transformToUniAndConcatenate(this::bound).collect().asList());
                        })));
    }

    private Uni<Boolean> launchIfWritten(Bound bound) {
        return !bound.written() || bound.gang() == null ? Uni.createFrom().item(bound.written()) : launch(bound.gang());
    }

    /**
     * Pods of a recorded placement onto the cluster, then {@code cluster_gang.launched_at}; on
     * failure the placement is undone.
     */
    private Uni<Boolean> launch(ClusterActuator.Gang gang) {
        UUID jobId = gang.ref().jobId();
        return act(() -> cluster.launch(gang)).replaceWith(true).onFailure().recoverWithUni(e -> {
            boolean permanent = e instanceof ClusterActionException c && c.permanent();
            String reason = "pods not bound: " + e.getMessage();
            LOG.warnf("job %s: %s (%s)", jobId, reason, permanent ? "failed" : "requeued");
            return Panache.withTransaction(() -> permanent
                    ? executor.release(jobId, Subjects.PLACEMENTS_FAILED, reason)
                    : requeue(jobId, Subjects.PLACEMENTS_REQUEUED, reason)).replaceWith(false);
        }).call(launched -> launched ? markLaunched(gang) : Uni.createFrom().voidItem());
    }

    /** All pods of the attempt are bound. Not recorded (a database error): the next relaunch finds them and records it. */
    private Uni<Void> markLaunched(ClusterActuator.Gang gang) {
        UUID jobId = gang.ref().jobId();
        return Panache.withTransaction(() -> ClusterGang.update("launchedAt = ?1 where jobId = ?2 and attempt = ?3",
                        Instant.now(), jobId, gang.attempt()))
                .replaceWithVoid()
                .onFailure().recoverWithUni(e -> {
                    LOG.warnf("job %s launched, but not recorded as launched (relaunched idempotently later): %s", jobId, e.toString());
                    return Uni.createFrom().voidItem();
                });
    }

    /**
     * Placements recorded but never launched (the service stopped between recording a placement and
     * creating its pods, or marking them launched): launched again from the allocation rows, so on
     * the same nodes and GPUs. Pods already made for the attempt are reused (the launch is
     * idempotent); a launch that fails is undone as in {@link #bind}. A victim in its grace period
     * is left to {@link #finishEvictions}. The item is the number of jobs launched.
     */
    public Uni<Integer> relaunch() {
        if (!cluster.acts() || !leadership.leading()) {
            return Uni.createFrom().item(0);
        }
        return Panache.withSession(() -> ClusterGang.<ClusterGang>list("launchedAt is null and jobId in "
                        + "(select r.jobId from RunningJobRecord r where r.evictingUntil is null) order by createdAt"))
                .map(rows -> rows.stream().map(r -> r.jobId).toList())
                .onItem().transformToMulti(ids -> Multi.createFrom().iterable(ids))
                .onItem().transformToUniAndConcatenate(this::relaunch)
                .collect().asList()
                .map(done -> (int) done.stream().filter(Boolean::booleanValue).count());
    }

    private Uni<Boolean> relaunch(UUID jobId) {
        if (!launching.add(jobId)) {
            return Uni.createFrom().item(false); // the binder is launching it right now
        }
        // read again once claimed: a launch that just finished has recorded launched_at by now
        return Panache.withSession(() -> unlaunched(jobId))
                .chain(gang -> {
                    if (gang == null) {
                        return Uni.createFrom().item(false);
                    }
                    LOG.infof("job %s: placement recorded but its pods never launched (restart?): launching attempt %d again",
                            jobId, gang.attempt());
                    return launch(gang);
                })
                .onFailure().recoverWithItem(e -> {
                    LOG.warnf("relaunching %s failed (next sweep retries): %s", jobId, e.toString());
                    return false;
                })
                .eventually(() -> launching.remove(jobId));
    }

    /** The recorded placement of a running job whose pods were not launched, or null. */
    private Uni<ClusterActuator.Gang> unlaunched(UUID jobId) {
        return ClusterGang.<ClusterGang>findById(jobId).chain(row -> row == null || row.launchedAt != null ? Uni.createFrom().nullItem()
                : RunningJobRecord.<RunningJobRecord>findById(jobId).chain(job -> job == null || job.evictingUntil != null
                        ? Uni.createFrom().nullItem()
                        : Allocation.<Allocation>list("jobId = ?1 order by id", jobId).map(rows -> {
                            if (rows.isEmpty()) {
                                return null;
                            }
                            List<ClusterActuator.TaskBinding> tasks = rows.stream().map(a -> new ClusterActuator.TaskBinding(a.task, a.node,
                                    Arrays.stream(a.gpuIndices).boxed().toList(), a.gpuMilli)).toList();
                            @SuppressWarnings("unchecked")
                            Map<String, String> pods = row.userPods ? EventCodec.fromJson(row.pods, LinkedHashMap.class) : Map.of();
                            return new ClusterActuator.Gang(new ClusterActuator.GangRef(jobId, row.namespace, row.gangLabel, row.userPods),
                                    EventCodec.fromJson(job.spec, JobQueued.class), tasks, pods, row.attempt);
                        })));
    }

    /**
     * A pod of a launched job is gone and gantry did not delete it (someone ran {@code kubectl
     * delete pod}, or a node drain): the job cannot finish as placed. A job gantry made pods for
     * loses the rest of them and returns to the pending set with its submission time; a user's gang
     * (its operator's pods) only gives up its allocation, its pods are left alone: the first is
     * {@code placements.requeued}, the second {@code placements.failed}, with the reason. Inside a transaction; false when the job is not
     * running (a second notice of the same deletion changes nothing).
     */
    public Uni<Boolean> podLost(UUID jobId, String reason) {
        return RunningJobRecord.<RunningJobRecord>findById(jobId).chain(job -> job == null ? Uni.createFrom().item(false)
                : gangRef(jobId).chain(gang -> {
                    if (gang == null || gang.userPods()) {
                        return executor.release(jobId, Subjects.PLACEMENTS_FAILED, reason);
                    }
                    return act(() -> cluster.stop(gang)).chain(() -> requeue(job, Subjects.PLACEMENTS_REQUEUED, reason));
                }));
    }

    /**
     * The rows of a placement, for {@code writes}: its allocations (added to {@code held} too, so
     * the later gangs of a plan see them), its running row, the pending row gone, its event.
     */
    private Recorded record(PendingJob pending, Placement placement, Map<String, String> gpuModelByNode, boolean preemptedBefore,
            List<Allocation> held, Writes writes) {
        JobQueued spec = EventCodec.fromJson(pending.spec, JobQueued.class);
        Instant now = Instant.now();
        List<Allocation> rows = new ArrayList<>();
        List<ClusterActuator.TaskBinding> tasks = new ArrayList<>();
        long cpu = 0;
        long memory = 0;
        int gpus = 0;
        Set<String> models = new HashSet<>();
        for (TaskPlacement t : placement.tasks()) {
            JobQueued.TaskGroup group = groupOf(spec, t.task());
            Allocation a = new Allocation();
            a.jobId = pending.jobId;
            a.task = t.task();
            a.node = t.node();
            a.gpuIndices = t.gpus().stream().mapToInt(Integer::intValue).toArray();
            a.gpuMilli = t.gpuMilli();
            a.allocatedAt = now;
            a.cpuMillis = group == null ? 0 : group.cpuMillis();
            a.memoryMiB = group == null ? 0 : group.memoryMiB();
            rows.add(a);
            tasks.add(new ClusterActuator.TaskBinding(t.task(), t.node(), t.gpus(), t.gpuMilli()));
            cpu += a.cpuMillis;
            memory += a.memoryMiB;
            gpus += t.gpus().size();
            if (!t.gpus().isEmpty()) {
                models.add(gpuModelByNode.get(t.node()));
            }
        }
        RunningJobRecord running = new RunningJobRecord();
        running.jobId = pending.jobId;
        running.queue = pending.queue;
        running.priority = pending.priority;
        running.spec = pending.spec;
        running.submittedAt = pending.submittedAt;
        running.boundAt = now;
        running.dueAt = executor.dueAt(now, spec);
        PlacementBound bound = new PlacementBound(pending.jobId, spec.queue(), spec.owner(), gpus,
                models.size() == 1 ? models.iterator().next() : null, cpu, memory, now);
        if (preemptedBefore && protection.isPositive()) {
            running.protectedUntil = now.plus(protection); // placed again after a preemption: runs undisturbed a while
        }
        held.addAll(rows);
        rows.forEach(writes::insert);
        writes.insert(running);
        writes.delete(pending);
        writes.event(Subjects.PLACEMENTS_BOUND, pending.jobId, bound);
        LOG.infof("job %s bound: %d tasks, %d GPUs", pending.jobId, rows.size(), bound.gpus());
        return new Recorded(pending.jobId, spec, tasks);
    }

    /** A placement recorded by {@link #record}: what its pods need. */
    private record Recorded(UUID jobId, JobQueued spec, List<ClusterActuator.TaskBinding> tasks) {
    }

    /** A recorded placement, with the gang to launch in kubernetes mode. Inside the transaction that recorded it. */
    private Uni<Bound> bound(Recorded recorded) {
        return (cluster.acts() ? gangOf(recorded.jobId(), recorded.spec(), recorded.tasks()) : Uni.createFrom().<ClusterActuator.Gang>nullItem())
                .map(gang -> new Bound(true, gang));
    }

    /** The gang to launch: users' pods as recorded when the gang formed, or a new record for the pods gantry creates. */
    private Uni<ClusterActuator.Gang> gangOf(UUID jobId, JobQueued spec, List<ClusterActuator.TaskBinding> tasks) {
        return ClusterGang.<ClusterGang>findById(jobId).chain(row -> {
            if (row != null && row.userPods) {
                row.launchedAt = null; // this placement is not on the cluster yet
                @SuppressWarnings("unchecked")
                Map<String, String> pods = EventCodec.fromJson(row.pods, LinkedHashMap.class);
                return Uni.createFrom().item(new ClusterActuator.Gang(
                        new ClusterActuator.GangRef(jobId, row.namespace, row.gangLabel, true), spec, tasks, pods, row.attempt));
            }
            ClusterGang gang = row != null ? row : new ClusterGang();
            gang.jobId = jobId;
            gang.namespace = namespace;
            gang.gangLabel = jobId.toString();
            gang.userPods = false;
            gang.attempt = row == null ? 1 : row.attempt + 1;
            gang.createdAt = Instant.now();
            gang.launchedAt = null;
            return gang.persist().map(x -> new ClusterActuator.Gang(
                    new ClusterActuator.GangRef(jobId, namespace, gang.gangLabel, false), spec, tasks, Map.of(), gang.attempt));
        });
    }

    /** Where the jobs' pods are, by job; empty in standalone mode. */
    private Uni<Map<UUID, ClusterActuator.GangRef>> gangRefs(List<UUID> jobIds) {
        if (!cluster.acts()) {
            return Uni.createFrom().item(Map.of());
        }
        return ClusterGang.<ClusterGang>list("jobId in ?1", jobIds).map(rows -> {
            Map<UUID, ClusterActuator.GangRef> refs = new HashMap<>();
            rows.forEach(row -> refs.put(row.jobId, new ClusterActuator.GangRef(row.jobId, row.namespace, row.gangLabel, row.userPods)));
            return refs;
        });
    }

    /** Where the job's pods are; null in standalone mode or when it never reached the cluster. */
    private Uni<ClusterActuator.GangRef> gangRef(UUID jobId) {
        if (!cluster.acts()) {
            return Uni.createFrom().nullItem();
        }
        return ClusterGang.<ClusterGang>findById(jobId).map(row -> row == null ? null
                : new ClusterActuator.GangRef(jobId, row.namespace, row.gangLabel, row.userPods));
    }

    /** A blocking cluster call on a worker thread; the result comes back on this context. */
    private Uni<Void> act(Runnable call) {
        return vertx.executeBlocking(Uni.createFrom().item(() -> {
            call.run();
            return null;
        })).replaceWithVoid();
    }

    /** The task group of a task named {@code <group>-<i>}. */
    private static JobQueued.TaskGroup groupOf(JobQueued spec, String task) {
        String group = task.replaceFirst("-\\d+$", "");
        return spec.taskGroups().stream().filter(g -> g.name().equals(group)).findFirst().orElse(null);
    }

    /** Why the placement collides with what is held now (a GPU held whole on either side), or null. */
    static String conflict(Placement placement, List<Allocation> held) {
        for (TaskPlacement t : placement.tasks()) {
            for (Allocation a : held) {
                if (!a.node.equals(t.node()) || (t.gpuMilli() != null && a.gpuMilli != null)) {
                    continue;
                }
                for (int g : a.gpuIndices) {
                    if (t.gpus().contains(g)) {
                        return "GPU " + g + " on " + t.node() + " is held by job " + a.jobId;
                    }
                }
            }
        }
        return null;
    }
}
