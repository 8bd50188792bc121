package dev.gantry.placement.window;

import dev.gantry.contracts.events.EventCodec;
import dev.gantry.contracts.events.Subjects;
import dev.gantry.contracts.jobs.JobQueued;
import dev.gantry.contracts.placements.PlacementBound;
import dev.gantry.contracts.placements.PlacementMigrated;
import dev.gantry.kit.outbox.Outbox;
import dev.gantry.placement.cluster.ClusterActuator;
import dev.gantry.placement.engine.domain.Placement;
import dev.gantry.placement.engine.domain.TaskPlacement;
import dev.gantry.placement.persistence.AgentTask;
import dev.gantry.placement.persistence.Allocation;
import dev.gantry.placement.persistence.JobMigration;
import dev.gantry.placement.persistence.NodeRecord;
import dev.gantry.placement.persistence.RunningJobRecord;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import org.jboss.logging.Logger;

/**
 * Finishes a move whose checkpoint grace is over (the job has stopped: its pods were evicted, its
 * agent stopped it, or in standalone mode the stop is simulated): the job gives up its old GPUs and
 * holds its targets, as a new attempt ({@code bound_at}, the agent's attempt, and a new pod
 * attempt in kubernetes mode) that resumes from its checkpoint; {@code placements.migrated}
 * ("moved") goes out. A move that cannot be finished (a target node gone, a target GPU taken) is
 * abandoned: the job has stopped, so it goes back in line with its submission time. Either way in
 * one transaction, driven by the reconciliation sweep ({@link Reconciler#finishEvictions}), so a
 * crash at any step before it leaves the move to the next sweep.
 */
@ApplicationScoped
public class MigrationFinisher {

    private static final Logger LOG = Logger.getLogger(MigrationFinisher.class);

    /** A finished move: whether the job moved, and its new pods to launch (kubernetes mode; else null). */
    record Finished(boolean moved, ClusterActuator.Gang gang) {
        static final Finished NOTHING = new Finished(false, null);
    }

    private final Outbox outbox;
    private final Gangs gangs;
    private final Requeue requeue;

    public MigrationFinisher(Outbox outbox, Gangs gangs, Requeue requeue) {
        this.outbox = outbox;
        this.gangs = gangs;
        this.requeue = requeue;
    }

    /** Whether the job's stop is a move (not a preemption). */
    static boolean moving(RunningJobRecord job) {
        return job.migrationTargets != null;
    }

    /** Finishes or abandons the move of a job that has stopped. Inside a transaction. */
    Uni<Finished> finish(RunningJobRecord job) {
        List<MoveTargets.Target> targets = MoveTargets.of(job.migrationTargets);
        Set<String> nodes = new HashSet<>();
        targets.forEach(t -> nodes.add(t.node()));
        return NodeRecord.<NodeRecord>list("name in ?1 and removed = false", nodes)
                .chain(known -> Allocation.<Allocation>list("node in ?1 or jobId = ?2", nodes, job.jobId)
                        .chain(held -> JobMigration.<JobMigration>find("jobId = ?1 and finishedAt is null", job.jobId).firstResult()
                                .chain(log -> {
                                    List<Allocation> others = held.stream().filter(a -> !a.jobId.equals(job.jobId)).toList();
                                    List<Allocation> mine = held.stream().filter(a -> a.jobId.equals(job.jobId)).toList();
                                    String problem = targets.isEmpty() ? "its targets are unreadable"
                                            : known.size() < nodes.size() ? "a target node is gone"
                                            : PlanRecorder.conflict(placement(job.jobId, targets), others);
                                    return problem == null ? move(job, targets, mine, log) : abandon(job, problem, log);
                                })));
    }

    private Uni<Finished> move(RunningJobRecord job, List<MoveTargets.Target> targets, List<Allocation> old, JobMigration log) {
        Instant now = Instant.now();
        JobQueued spec = EventCodec.fromJson(job.spec, JobQueued.class);
        String from = log != null ? log.fromNodes : MoveTargets.nodes(old.stream().map(a -> a.node).toList());
        String to = MoveTargets.nodes(targets.stream().map(MoveTargets.Target::node).toList());
        List<Allocation> rows = new ArrayList<>();
        List<ClusterActuator.TaskBinding> tasks = new ArrayList<>();
        List<PlacementBound.BoundTask> bound = new ArrayList<>();
        for (MoveTargets.Target t : targets) {
            Allocation a = MoveTargets.hold(job.jobId, t);
            a.allocatedAt = now;
            rows.add(a);
            tasks.add(new ClusterActuator.TaskBinding(t.task(), t.node(), t.gpus(), t.gpuMilli(), t.migProfile(), t.migDevices()));
            bound.add(new PlacementBound.BoundTask(t.task(), t.node(), t.gpus(), t.gpuMilli(), t.migDevices()));
        }
        // the simulated run did not progress while it stopped: what was left of it is left after the move
        Instant stoppedAt = log != null ? log.startedAt : now;
        if (!job.dueAt.equals(StandaloneExecutor.NEVER)) {
            job.dueAt = now.plus(Duration.between(stoppedAt, job.dueAt).isNegative() ? Duration.ZERO : Duration.between(stoppedAt, job.dueAt));
        }
        job.boundAt = now; // a new attempt: the agents start it afresh, from its checkpoint
        job.evictingUntil = null;
        job.evictReason = null;
        job.migrationTargets = null;
        job.lastMigratedAt = now;
        if (log != null) {
            log.finishedAt = now;
            log.outcome = JobMigration.MOVED;
        }
        LOG.infof("job %s migrated from %s to %s", job.jobId, from, to);
        PlacementMigrated event = new PlacementMigrated(job.jobId, job.queue, PlacementMigrated.MOVED, from, to, null, now, null, bound);
        return Allocation.delete("jobId", job.jobId)
                .chain(() -> AgentTask.delete("jobId", job.jobId))
                .chain(() -> Allocation.persist(rows))
                .chain(() -> outbox.append(Subjects.PLACEMENTS_MIGRATED, job.jobId.toString(), event))
                .chain(() -> gangs.gangRef(job.jobId))
                .chain(ref -> ref == null ? Uni.createFrom().<ClusterActuator.Gang>nullItem() : gangs.gangOf(job.jobId, spec, tasks))
                .map(gang -> new Finished(true, gang));
    }

    private Uni<Finished> abandon(RunningJobRecord job, String problem, JobMigration log) {
        Instant now = Instant.now();
        String from = log != null ? log.fromNodes : "?";
        String to = log != null ? log.toNodes : "?";
        if (log != null) {
            log.finishedAt = now;
            log.outcome = JobMigration.ABANDONED;
        }
        LOG.warnf("job %s: migration from %s to %s abandoned (%s); it has stopped, so it goes back in line", job.jobId, from, to, problem);
        return outbox.append(Subjects.PLACEMENTS_MIGRATED, job.jobId.toString(),
                        new PlacementMigrated(job.jobId, job.queue, PlacementMigrated.ABANDONED, from, to, problem, now, null, List.of()))
                .chain(() -> requeue.requeue(job, Subjects.PLACEMENTS_REQUEUED, "migration abandoned: " + problem))
                .replaceWith(Finished.NOTHING);
    }

    private static Placement placement(UUID jobId, List<MoveTargets.Target> targets) {
        return new Placement(jobId.toString(), targets.stream()
                .map(t -> new TaskPlacement(t.task(), t.node(), t.gpus(), t.gpuMilli(), t.migDevices())).toList());
    }
}
