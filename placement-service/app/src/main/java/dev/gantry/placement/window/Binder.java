package dev.gantry.placement.window;

import dev.gantry.contracts.events.EventCodec;
import dev.gantry.contracts.events.Subjects;
import dev.gantry.contracts.jobs.JobQueued;
import dev.gantry.contracts.placements.PlacementBound;
import dev.gantry.contracts.placements.PlacementReleased;
import dev.gantry.kit.outbox.Outbox;
import dev.gantry.placement.cluster.ClusterActionException;
import dev.gantry.placement.cluster.ClusterActuator;
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

    private final Outbox outbox;
    private final StandaloneExecutor executor;
    private final ClusterActuator cluster;
    private final Leadership leadership;
    private final Vertx vertx;
    private final Duration gracePeriod;
    private final Duration protection;
    private final String namespace;
    /** Jobs whose pods this replica is launching right now, so a relaunch never races the binder's own launch. */
    private final Set<UUID> launching = ConcurrentHashMap.newKeySet();

    public Binder(Outbox outbox, StandaloneExecutor executor, ClusterActuator cluster, Leadership leadership, Vertx vertx,
            @ConfigProperty(name = "gantry.placement.preemption.grace-period", defaultValue = "30s") Duration gracePeriod,
            @ConfigProperty(name = "gantry.placement.preemption.protection", defaultValue = "5m") Duration protection,
            @ConfigProperty(name = "gantry.placement.kubernetes.namespace", defaultValue = "gantry") String namespace) {
        this.outbox = outbox;
        this.executor = executor;
        this.cluster = cluster;
        this.leadership = leadership;
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
        return Multi.createFrom().iterable(plan.preemptions())
                .onItem().transformToUniAndConcatenate(this::preempt)
                .collect().asList()
                .chain(() -> Multi.createFrom().iterable(plan.placements())
                        .onItem().transformToUniAndConcatenate(p -> bind(p, gpuModelByNode))
                        .collect().asList())
                .map(bound -> (int) bound.stream().filter(Boolean::booleanValue).count());
    }

    /** What a preemption did: nothing, released at once, or told and still holding its GPUs until a deadline. */
    private record Preempted(boolean done, Duration grace, ClusterActuator.GangRef gang) {
        static final Preempted NOTHING = new Preempted(false, Duration.ZERO, null);
    }

    Uni<Boolean> preempt(Preemption preemption) {
        UUID jobId = UUID.fromString(preemption.job());
        return Panache.withTransaction(() -> startPreemption(jobId, preemption.reason()))
                .call(p -> p.done() && p.gang() != null ? act(() -> cluster.evict(p.gang(), p.grace()))
                        .onFailure().invoke(e -> LOG.warnf("evicting the pods of %s failed (deleted when its grace ends): %s",
                                jobId, e.toString()))
                        .onFailure().recoverWithNull() : Uni.createFrom().nullItem())
                .map(Preempted::done)
                .onFailure().recoverWithItem(e -> {
                    LOG.warnf("preempting %s failed, left running: %s", jobId, e.toString());
                    return false;
                });
    }

    private Uni<Preempted> startPreemption(UUID jobId, String reason) {
        Instant now = Instant.now();
        return RunningJobRecord.<RunningJobRecord>findById(jobId).chain(job -> {
            if (job == null) {
                return Uni.createFrom().item(Preempted.NOTHING);
            }
            if (job.evictingUntil != null) {
                return Uni.createFrom().item(Preempted.NOTHING); // already told; its GPUs free up at the deadline
            }
            if (job.protectedUntil != null && job.protectedUntil.isAfter(now)) {
                LOG.infof("job %s not preempted: protected until %s (preempted recently)", jobId, job.protectedUntil);
                return Uni.createFrom().item(Preempted.NOTHING);
            }
            JobQueued spec = EventCodec.fromJson(job.spec, JobQueued.class);
            return countPreemption(jobId, now).chain(() -> gangRef(jobId)).chain(gang -> {
                if (spec.checkpointable() && gracePeriod.isPositive()) {
                    // told first: the victim checkpoints while it still holds its GPUs
                    job.evictingUntil = now.plus(gracePeriod);
                    job.evictReason = reason;
                    String told = reason + " (checkpoint grace " + gracePeriod.toSeconds() + "s)";
                    return outbox.append(Subjects.PLACEMENTS_PREEMPTED, jobId.toString(),
                                    new PlacementReleased(jobId, job.queue, told, job.evictingUntil))
                            .invoke(() -> LOG.infof("job %s preempted, keeps its GPUs until %s: %s", jobId, job.evictingUntil, reason))
                            .replaceWith(new Preempted(true, gracePeriod, gang));
                }
                return requeue(job, Subjects.PLACEMENTS_PREEMPTED, reason).replaceWith(new Preempted(true, Duration.ZERO, gang));
            });
        });
    }

    private static Uni<Void> countPreemption(UUID jobId, Instant now) {
        return JobPreemption.<JobPreemption>findById(jobId).chain(row -> {
            JobPreemption p = row != null ? row : new JobPreemption();
            p.jobId = jobId;
            p.lastPreemptedAt = now;
            p.times = row == null ? 1 : row.times + 1;
            return p.persist().replaceWithVoid();
        });
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
     * submission time, {@code placements.failed}. Call inside a transaction.
     */
    public Uni<Void> failJobsOn(String node) {
        return Allocation.<Allocation>list("node", node).chain(rows -> {
            List<UUID> jobs = rows.stream().map(a -> a.jobId).distinct().toList();
            Uni<Void> chain = Uni.createFrom().voidItem();
            for (UUID jobId : jobs) {
                chain = chain.chain(() -> requeue(jobId, Subjects.PLACEMENTS_FAILED, "node " + node + " lost")).replaceWithVoid();
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
        return Allocation.delete("jobId", jobId)
                .chain(job::delete)
                .chain(() -> pending.persist())
                .chain(() -> subject == null ? Uni.createFrom().nullItem()
                        : outbox.append(subject, jobId.toString(), new PlacementReleased(jobId, spec.queue(), reason, Instant.now())))
                .invoke(() -> LOG.infof("job %s back to pending (%s): %s", jobId, subject == null ? "grace period over" : subject, reason))
                .replaceWith(true);
    }

    /** The bound gang, for the actuator (null in standalone mode or when nothing was written). */
    private record Bound(boolean written, ClusterActuator.Gang gang) {
    }

    Uni<Boolean> bind(Placement placement, Map<String, String> gpuModelByNode) {
        UUID jobId = UUID.fromString(placement.job());
        boolean mine = launching.add(jobId); // from before the placement is recorded until its pods are launched
        Set<String> nodes = new HashSet<>();
        placement.tasks().forEach(t -> nodes.add(t.node()));
        return Panache.withTransaction(() -> PendingJob.<PendingJob>findById(jobId).chain(pending -> {
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
                return write(pending, placement, gpuModelByNode);
            });
        })).chain(bound -> !bound.written() || bound.gang() == null ? Uni.createFrom().item(bound.written()) : launch(bound.gang()))
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
                    : requeue(jobId, Subjects.PLACEMENTS_FAILED, reason)).replaceWith(false);
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
     * (its operator's pods) only gives up its allocation, its pods are left alone. Either way
     * {@code placements.failed} with the reason. Inside a transaction; false when the job is not
     * running (a second notice of the same deletion changes nothing).
     */
    public Uni<Boolean> podLost(UUID jobId, String reason) {
        return RunningJobRecord.<RunningJobRecord>findById(jobId).chain(job -> job == null ? Uni.createFrom().item(false)
                : gangRef(jobId).chain(gang -> {
                    if (gang == null || gang.userPods()) {
                        return executor.release(jobId, Subjects.PLACEMENTS_FAILED, reason);
                    }
                    return act(() -> cluster.stop(gang)).chain(() -> requeue(job, Subjects.PLACEMENTS_FAILED, reason));
                }));
    }

    private Uni<Bound> write(PendingJob pending, Placement placement, Map<String, String> gpuModelByNode) {
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
        return JobPreemption.<JobPreemption>findById(pending.jobId)
                .invoke(preempted -> {
                    if (preempted != null && protection.isPositive()) {
                        running.protectedUntil = now.plus(protection); // placed again after a preemption: runs undisturbed a while
                    }
                })
                .chain(() -> Panache.getSession())
                .chain(session -> session.persistAll(rows.toArray()))
                .chain(pending::delete)
                .chain(() -> running.persist())
                .chain(() -> outbox.append(Subjects.PLACEMENTS_BOUND, pending.jobId.toString(), bound))
                .invoke(() -> LOG.infof("job %s bound: %d tasks, %d GPUs", pending.jobId, rows.size(), bound.gpus()))
                .chain(() -> cluster.acts() ? gangOf(pending.jobId, spec, tasks) : Uni.createFrom().nullItem())
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
