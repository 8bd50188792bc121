package dev.gantry.placement.window;

import dev.gantry.contracts.events.EventCodec;
import dev.gantry.contracts.events.Subjects;
import dev.gantry.contracts.jobs.JobQueued;
import dev.gantry.contracts.placements.PlacementBound;
import dev.gantry.kit.outbox.Outbox;
import dev.gantry.placement.cluster.ClusterActuator;
import dev.gantry.placement.cluster.LeaderFence;
import dev.gantry.placement.engine.domain.Placement;
import dev.gantry.placement.engine.domain.TaskPlacement;
import dev.gantry.placement.persistence.Allocation;
import dev.gantry.placement.persistence.JobPreemption;
import dev.gantry.placement.persistence.PendingJob;
import dev.gantry.placement.persistence.RunningJobRecord;
import io.quarkus.hibernate.reactive.panache.Panache;
import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.persistence.LockModeType;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.jboss.logging.Logger;

/**
 * Records a plan's placements, each in a fenced transaction with its {@code placements.bound} in the
 * outbox: every task's allocation, the running row, the job gone from the pending set, and in
 * kubernetes mode the gang to launch. A gang is written whole or not at all; a job that left the
 * pending set or whose GPUs are taken while the window was planning is not written (the next
 * window plans it again). The pods are the {@link GangLauncher}'s.
 */
@ApplicationScoped
public class PlanRecorder {

    private static final Logger LOG = Logger.getLogger(PlanRecorder.class);

    /** A recorded placement, with the gang to launch in kubernetes mode (null in standalone mode or when nothing was written). */
    record Bound(boolean written, ClusterActuator.Gang gang) {
        static final Bound NOTHING = new Bound(false, null);
    }

    /** A placement recorded by {@link #record}: what its pods need. */
    private record Recorded(UUID jobId, JobQueued spec, List<ClusterActuator.TaskBinding> tasks) {
    }

    private final Outbox outbox;
    private final LeaderFence fence;
    private final Gangs gangs;
    private final StandaloneExecutor executor;
    private final ClusterActuator cluster;
    private final Duration protection;

    public PlanRecorder(Outbox outbox, LeaderFence fence, Gangs gangs, StandaloneExecutor executor, ClusterActuator cluster,
            @ConfigProperty(name = "gantry.placement.preemption.protection", defaultValue = "5m") Duration protection) {
        this.outbox = outbox;
        this.fence = fence;
        this.gangs = gangs;
        this.executor = executor;
        this.cluster = cluster;
        this.protection = protection;
    }

    /** One placement, in a transaction of its own. */
    Uni<Bound> record(Placement placement, Map<String, String> gpuModelByNode) {
        UUID jobId = UUID.fromString(placement.job());
        Set<String> nodes = new HashSet<>();
        placement.tasks().forEach(t -> nodes.add(t.node()));
        return Panache.withTransaction(() -> fence.guard().chain(() -> PendingJob.<PendingJob>findById(jobId, LockModeType.PESSIMISTIC_WRITE)).chain(pending -> {
            if (pending == null) {
                LOG.debugf("job %s left the pending set while planning; not bound", jobId);
                return Uni.createFrom().item(Bound.NOTHING);
            }
            return heldOn(nodes).chain(held -> {
                String conflict = conflict(placement, held);
                if (conflict != null) {
                    LOG.infof("job %s not bound: %s (replanned next window)", jobId, conflict);
                    return Uni.createFrom().item(Bound.NOTHING);
                }
                return JobPreemption.<JobPreemption>findById(jobId).chain(preempted -> {
                    PlanWrites writes = new PlanWrites();
                    Recorded recorded = record(pending, placement, gpuModelByNode, preempted != null, held, writes);
                    return writes.apply(outbox).chain(() -> bound(recorded));
                });
            });
        }));
    }

    /**
     * A plan's placements, in one transaction: the pending rows, the allocations on the plan's nodes
     * and the preemption records read with one query each for all jobs; each gang checked against
     * what is held, including the gangs recorded before it in the plan, and written whole or
     * skipped; the writes batched, the events appended last.
     */
    Uni<List<Bound>> recordAll(List<Placement> placements, List<UUID> ids, Map<String, String> gpuModelByNode) {
        return Panache.withTransaction(() -> fence.guard().chain(() -> recordPlacements(placements, ids, gpuModelByNode)));
    }

    private Uni<List<Bound>> recordPlacements(List<Placement> placements, List<UUID> ids, Map<String, String> gpuModelByNode) {
        Set<String> nodes = new HashSet<>();
        placements.forEach(p -> p.tasks().forEach(t -> nodes.add(t.node())));
        return PlanWrites.batching()
                // locked, in job order as a run of cancellations locks them: a job cancelled meanwhile is
                // either gone when read here or waits for this transaction and finds it running
                .chain(() -> PendingJob.<PendingJob>find("jobId in ?1 order by jobId", ids).withLock(LockModeType.PESSIMISTIC_WRITE).list())
                .chain(pendings -> heldOn(nodes)
                        .chain(heldNow -> JobPreemption.<JobPreemption>list("jobId in ?1", ids).chain(preemptions -> {
                            Map<UUID, PendingJob> pending = PlanWrites.byJob(pendings, p -> p.jobId);
                            Set<UUID> preemptedBefore = PlanWrites.byJob(preemptions, p -> p.jobId).keySet();
                            List<Allocation> held = new ArrayList<>(heldNow); // grows with each gang recorded
                            PlanWrites writes = new PlanWrites();
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

    /**
     * The rows of a placement, for {@code writes}: its allocations (added to {@code held} too, so
     * the later gangs of a plan see them), its running row, the pending row gone, its event.
     */
    private Recorded record(PendingJob pending, Placement placement, Map<String, String> gpuModelByNode, boolean preemptedBefore,
            List<Allocation> held, PlanWrites writes) {
        JobQueued spec = EventCodec.fromJson(pending.spec, JobQueued.class);
        Instant now = Instant.now();
        List<Allocation> rows = new ArrayList<>();
        List<ClusterActuator.TaskBinding> tasks = new ArrayList<>();
        long cpu = 0;
        long memory = 0;
        int gpus = 0;
        Set<String> models = new HashSet<>();
        List<PlacementBound.BoundTask> boundTasks = new ArrayList<>();
        for (TaskPlacement t : placement.tasks()) {
            JobQueued.TaskGroup group = groupOf(spec, t.task());
            Allocation a = new Allocation();
            a.jobId = pending.jobId;
            a.task = t.task();
            a.node = t.node();
            a.gpuIndices = t.gpus().stream().mapToInt(Integer::intValue).toArray();
            a.gpuMilli = t.gpuMilli();
            a.migDevices = t.migDevices().toArray(String[]::new);
            a.migProfile = t.migDevices().isEmpty() || group == null ? null : group.migProfile();
            a.allocatedAt = now;
            a.cpuMillis = group == null ? 0 : group.cpuMillis();
            a.memoryMiB = group == null ? 0 : group.memoryMiB();
            rows.add(a);
            tasks.add(new ClusterActuator.TaskBinding(t.task(), t.node(), t.gpus(), t.gpuMilli(), a.migProfile, t.migDevices()));
            boundTasks.add(new PlacementBound.BoundTask(t.task(), t.node(), t.gpus(), t.gpuMilli(), t.migDevices()));
            cpu += a.cpuMillis;
            memory += a.memoryMiB;
            gpus += t.gpus().size() + t.migDevices().size(); // a MIG device counts as one GPU here, as a shared GPU does
            if (!t.gpus().isEmpty() || !t.migDevices().isEmpty()) {
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
                models.size() == 1 ? models.iterator().next() : null, cpu, memory, now, boundTasks);
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


    /** A recorded placement, with the gang to launch in kubernetes mode. Inside the transaction that recorded it. */
    private Uni<Bound> bound(Recorded recorded) {
        return (cluster.acts() ? gangs.gangOf(recorded.jobId(), recorded.spec(), recorded.tasks()) : Uni.createFrom().<ClusterActuator.Gang>nullItem())
                .map(gang -> new Bound(true, gang));
    }

    /** What is held on the nodes: their allocations, and the GPUs held for jobs moving there ({@link MoveTargets}). */
    private static Uni<List<Allocation>> heldOn(Set<String> nodes) {
        return Allocation.<Allocation>list("node in ?1", nodes).chain(rows -> MoveTargets.heldOn(nodes).map(targets -> {
            if (targets.isEmpty()) {
                return rows;
            }
            List<Allocation> all = new ArrayList<>(rows);
            all.addAll(targets);
            return all;
        }));
    }

    /** The task group of a task named {@code <group>-<i>}. */
    private static JobQueued.TaskGroup groupOf(JobQueued spec, String task) {
        String group = task.replaceFirst("-\\d+$", "");
        return spec.taskGroups().stream().filter(g -> g.name().equals(group)).findFirst().orElse(null);
    }

    /** Why the placement collides with what is held now (a GPU held whole on either side, a MIG device), or null. */
    static String conflict(Placement placement, List<Allocation> held) {
        for (TaskPlacement t : placement.tasks()) {
            for (Allocation a : held) {
                if (!a.node.equals(t.node())) {
                    continue;
                }
                if (a.migDevices != null) {
                    for (String mig : a.migDevices) {
                        if (t.migDevices().contains(mig)) {
                            return "MIG device " + mig + " on " + t.node() + " is held by job " + a.jobId;
                        }
                    }
                }
                if (t.gpuMilli() != null && a.gpuMilli != null) {
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
