package dev.gantry.placement.window;

import dev.gantry.contracts.events.EventCodec;
import dev.gantry.contracts.events.Subjects;
import dev.gantry.contracts.jobs.JobQueued;
import dev.gantry.contracts.placements.PlacementBound;
import dev.gantry.contracts.placements.PlacementReleased;
import dev.gantry.kit.outbox.Outbox;
import dev.gantry.placement.engine.domain.Placement;
import dev.gantry.placement.engine.domain.Plan;
import dev.gantry.placement.engine.domain.Preemption;
import dev.gantry.placement.engine.domain.TaskPlacement;
import dev.gantry.placement.persistence.Allocation;
import dev.gantry.placement.persistence.PendingJob;
import dev.gantry.placement.persistence.RunningJobRecord;
import io.quarkus.hibernate.reactive.panache.Panache;
import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import org.jboss.logging.Logger;

/**
 * Standalone binder: applies a validated plan to placement's own state, job by job, each in one
 * transaction with its event in the outbox. Preemptions first (the victim's allocations go, it
 * returns to the pending set with its original submission time, {@code placements.preempted}),
 * then placements (every task's allocation, the job leaves the pending set, {@code placements.bound}):
 * a gang is written whole or not at all. A job that was cancelled or a GPU that was taken while the
 * window was planning makes that job's transaction write nothing; the next window plans it again.
 * Migrations are not applied yet.
 */
@ApplicationScoped
public class Binder {

    private static final Logger LOG = Logger.getLogger(Binder.class);

    private final Outbox outbox;
    private final StandaloneExecutor executor;

    public Binder(Outbox outbox, StandaloneExecutor executor) {
        this.outbox = outbox;
        this.executor = executor;
    }

    /** Applies the plan; the item is the number of jobs placed. {@code gpuModelByNode}: for the bound event. */
    public Uni<Integer> apply(Plan plan, Map<String, String> gpuModelByNode) {
        if (!plan.migrations().isEmpty()) {
            LOG.infof("plan has %d migrations; not applied (standalone binder does not migrate yet)", plan.migrations().size());
        }
        return Multi.createFrom().iterable(plan.preemptions())
                .onItem().transformToUniAndConcatenate(this::preempt)
                .collect().asList()
                .chain(() -> Multi.createFrom().iterable(plan.placements())
                        .onItem().transformToUniAndConcatenate(p -> bind(p, gpuModelByNode))
                        .collect().asList())
                .map(bound -> (int) bound.stream().filter(Boolean::booleanValue).count());
    }

    Uni<Boolean> preempt(Preemption preemption) {
        UUID jobId = UUID.fromString(preemption.job());
        return Panache.withTransaction(() -> requeue(jobId, Subjects.PLACEMENTS_PREEMPTED, preemption.reason()))
                .onFailure().recoverWithItem(e -> {
                    LOG.warnf("preempting %s failed, left running: %s", jobId, e.toString());
                    return false;
                });
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

    /** A running job released and back in the pending set, with the event on {@code subject}. Inside a transaction. */
    private Uni<Boolean> requeue(UUID jobId, String subject, String reason) {
        return RunningJobRecord.<RunningJobRecord>findById(jobId).chain(job -> {
            if (job == null) {
                return Uni.createFrom().item(false);
            }
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
                    .chain(() -> outbox.append(subject, jobId.toString(),
                            new PlacementReleased(jobId, spec.queue(), reason, Instant.now())))
                    .invoke(() -> LOG.infof("job %s back to pending (%s): %s", jobId, subject, reason))
                    .replaceWith(true);
        });
    }

    Uni<Boolean> bind(Placement placement, Map<String, String> gpuModelByNode) {
        UUID jobId = UUID.fromString(placement.job());
        Set<String> nodes = new HashSet<>();
        placement.tasks().forEach(t -> nodes.add(t.node()));
        return Panache.withTransaction(() -> PendingJob.<PendingJob>findById(jobId).chain(pending -> {
            if (pending == null) {
                LOG.debugf("job %s left the pending set while planning; not bound", jobId);
                return Uni.createFrom().item(false);
            }
            return Allocation.<Allocation>list("node in ?1", nodes).chain(held -> {
                String conflict = conflict(placement, held);
                if (conflict != null) {
                    LOG.infof("job %s not bound: %s (replanned next window)", jobId, conflict);
                    return Uni.createFrom().item(false);
                }
                return write(pending, placement, gpuModelByNode).replaceWith(true);
            });
        })).onFailure().recoverWithItem(e -> {
            LOG.warnf("binding %s failed, left pending: %s", jobId, e.toString());
            return false;
        });
    }

    private Uni<Void> write(PendingJob pending, Placement placement, Map<String, String> gpuModelByNode) {
        JobQueued spec = EventCodec.fromJson(pending.spec, JobQueued.class);
        Instant now = Instant.now();
        List<Allocation> rows = new ArrayList<>();
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
        return Panache.getSession()
                .chain(session -> session.persistAll(rows.toArray()))
                .chain(pending::delete)
                .chain(() -> running.persist())
                .chain(() -> outbox.append(Subjects.PLACEMENTS_BOUND, pending.jobId.toString(), bound))
                .invoke(() -> LOG.infof("job %s bound: %d tasks, %d GPUs", pending.jobId, rows.size(), bound.gpus()))
                .replaceWithVoid();
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
