package dev.gantry.placement.window;

import dev.gantry.contracts.events.EventCodec;
import dev.gantry.contracts.events.Subjects;
import dev.gantry.contracts.jobs.JobQueued;
import dev.gantry.contracts.placements.PlacementMigrated;
import dev.gantry.kit.outbox.Outbox;
import dev.gantry.placement.cluster.ClusterActuator;
import dev.gantry.placement.cluster.LeaderFence;
import dev.gantry.placement.engine.domain.Migration;
import dev.gantry.placement.engine.domain.Placement;
import dev.gantry.placement.engine.domain.TaskPlacement;
import dev.gantry.placement.persistence.Allocation;
import dev.gantry.placement.persistence.JobMigration;
import dev.gantry.placement.persistence.RunningJobRecord;
import io.quarkus.hibernate.reactive.panache.Panache;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.jboss.logging.Logger;

/**
 * Records a plan's migrations before anything acts on them, all in one fenced transaction and all
 * or none (a move is worth its disruption only with the others that make the room): each job is
 * told to stop with its checkpoint grace ({@code running_job.evicting_until}, the path a
 * checkpointable victim takes: the agent's stop, the pods' eviction), the GPUs it goes to are held
 * for it ({@code migration_targets}), a {@code job_migration} row counts against the disruption
 * budget, and {@code placements.migrated} ("stopping") goes out. The move is finished when the
 * grace ends, by {@link MigrationFinisher}.
 */
@ApplicationScoped
public class MigrationRecorder {

    private static final Logger LOG = Logger.getLogger(MigrationRecorder.class);

    /** A recorded move: the job's pods to evict with its grace (kubernetes mode; null otherwise). */
    record Started(UUID jobId, Duration grace, ClusterActuator.GangRef gang) {
    }

    private final Outbox outbox;
    private final LeaderFence fence;
    private final Gangs gangs;
    private final DisruptionBudget budget;
    private final Duration defaultGrace;

    public MigrationRecorder(Outbox outbox, LeaderFence fence, Gangs gangs, DisruptionBudget budget,
            @ConfigProperty(name = "gantry.placement.preemption.grace-period", defaultValue = "30s") Duration defaultGrace) {
        this.outbox = outbox;
        this.fence = fence;
        this.gangs = gangs;
        this.budget = budget;
        this.defaultGrace = defaultGrace;
    }

    /**
     * The plan's moves, all or none; the item lists the moves recorded (empty when refused).
     * {@code consolidation}: what a scheduled consolidation's moves make room for (null for a window's), said in the history.
     */
    Uni<List<Started>> recordAll(List<Migration> migrations, String consolidation) {
        if (migrations.isEmpty()) {
            return Uni.createFrom().item(List.of());
        }
        return Panache.withTransaction(() -> fence.guard().chain(() -> record(migrations, consolidation)));
    }

    private Uni<List<Started>> record(List<Migration> migrations, String consolidation) {
        Instant now = Instant.now();
        List<UUID> ids = migrations.stream().map(m -> UUID.fromString(m.job())).distinct().toList();
        Set<String> targetNodes = new HashSet<>();
        migrations.forEach(m -> m.tasks().forEach(t -> targetNodes.add(t.node())));
        return RunningJobRecord.<RunningJobRecord>list("jobId in ?1", ids)
                .chain(jobs -> Allocation.<Allocation>list("jobId in ?1 or node in ?2", ids, targetNodes)
                        .chain(allocations -> MoveTargets.heldOn(targetNodes)
                                .chain(targets -> JobMigration.<JobMigration>list("startedAt > ?1", now.minus(Duration.ofHours(1)))
                                        .chain(recent -> gangs.gangRefs(ids).chain(refs -> {
                                            Map<UUID, RunningJobRecord> running = PlanWrites.byJob(jobs, j -> j.jobId);
                                            List<Allocation> held = new ArrayList<>(allocations);
                                            held.addAll(targets);
                                            // every move checked before any row changes: the managed rows would be written at commit
                                            DisruptionBudget.Spent spent = spentOf(recent);
                                            List<RunningJobRecord> moving = new ArrayList<>();
                                            for (Migration m : migrations) {
                                                UUID jobId = UUID.fromString(m.job());
                                                RunningJobRecord job = running.remove(jobId); // a job named twice moves once
                                                String refused = job == null ? "not running" : refusal(job, m, held, now, spent);
                                                if (refused != null) {
                                                    LOG.infof("plan's %d migrations not recorded: job %s %s (replanned next window)",
                                                            migrations.size(), jobId, refused);
                                                    return Uni.createFrom().item(List.<Started>of());
                                                }
                                                spent = spent.plus(job.queue);
                                                m.tasks().forEach(t -> held.add(MoveTargets.hold(jobId, new MoveTargets.Target(t.task(), t.node(),
                                                        t.gpus(), t.gpuMilli(), 0, 0, null, t.migDevices())))); // the plan's later moves keep off them
                                                moving.add(job);
                                            }
                                            PlanWrites writes = new PlanWrites();
                                            List<Started> started = new ArrayList<>();
                                            for (int i = 0; i < moving.size(); i++) {
                                                RunningJobRecord job = moving.get(i);
                                                List<Allocation> from = allocations.stream().filter(a -> a.jobId.equals(job.jobId)).toList();
                                                started.add(start(job, migrations.get(i), from, now, refs.get(job.jobId), writes,
                                                        consolidation));
                                            }
                                            return writes.apply(outbox).replaceWith(started);
                                        })))));
    }

    /** Why the job cannot make this move now, or null. */
    private String refusal(RunningJobRecord job, Migration m, List<Allocation> held, Instant now, DisruptionBudget.Spent spent) {
        if (job.evictingUntil != null || job.migrationTargets != null) {
            return "is stopping already";
        }
        JobQueued spec = EventCodec.fromJson(job.spec, JobQueued.class);
        if (!spec.migratable() || !spec.checkpointable()) {
            return "is not migratable";
        }
        String over = budget.refusal(now, job.queue, job.boundAt, job.lastMigratedAt, spent);
        if (over != null) {
            return "may not move: " + over;
        }
        Set<String> own = new HashSet<>();
        held.stream().filter(a -> a.jobId.equals(job.jobId)).forEach(a -> own.add(a.task));
        Set<String> moving = new HashSet<>();
        m.tasks().forEach(t -> moving.add(t.task()));
        if (!own.equals(moving)) {
            return "moves tasks " + moving + " but holds " + own;
        }
        String shape = shapeChange(job.jobId, m, held);
        if (shape != null) {
            return shape;
        }
        // its old GPUs count too: it holds them until it has stopped
        String conflict = PlanRecorder.conflict(new Placement(m.job(), m.tasks()), held);
        return conflict == null ? null : "cannot move there: " + conflict;
    }

    /**
     * A move keeps each task's devices as they are, only elsewhere: as many whole GPUs, or as many MIG devices (of
     * its profile: the engine moves a MIG task only to devices of its profile, PlanValidator checks it against the
     * nodes). Why a task's move changes that, or null.
     */
    static String shapeChange(UUID jobId, Migration m, List<Allocation> held) {
        for (TaskPlacement t : m.tasks()) {
            Allocation old = held.stream().filter(a -> a.jobId.equals(jobId) && a.task.equals(t.task())).findFirst().orElse(null);
            int oldMig = old == null || old.migDevices == null ? 0 : old.migDevices.length;
            int oldGpus = old == null ? 0 : old.gpuIndices.length;
            if (old != null && (oldMig != t.migDevices().size() || oldGpus != t.gpus().size())) {
                return "would move task " + t.task() + " from " + describe(oldGpus, oldMig, old.migProfile) + " to "
                        + describe(t.gpus().size(), t.migDevices().size(), old.migProfile);
            }
        }
        return null;
    }

    private static String describe(int gpus, int migDevices, String profile) {
        return migDevices > 0 ? migDevices + " MIG devices " + profile + (gpus > 0 ? " and " + gpus + " GPUs" : "") : gpus + " GPUs";
    }

    /** The rows and the event of one move. */
    private Started start(RunningJobRecord job, Migration m, List<Allocation> from, Instant now, ClusterActuator.GangRef gang,
            PlanWrites writes, String consolidation) {
        JobQueued spec = EventCodec.fromJson(job.spec, JobQueued.class);
        Map<String, Allocation> byTask = new LinkedHashMap<>();
        from.forEach(a -> byTask.put(a.task, a));
        List<MoveTargets.Target> targets = new ArrayList<>();
        for (TaskPlacement t : m.tasks()) {
            Allocation old = byTask.get(t.task());
            MoveTargets.Target target = new MoveTargets.Target(t.task(), t.node(), t.gpus(), t.gpuMilli(),
                    old == null ? 0 : old.cpuMillis, old == null ? 0 : old.memoryMiB, old == null ? null : old.migProfile, t.migDevices());
            targets.add(target);
        }
        Duration grace = spec.checkpointGraceSeconds() != null ? Duration.ofSeconds(spec.checkpointGraceSeconds()) : defaultGrace;
        String fromNodes = MoveTargets.nodes(from.stream().map(a -> a.node).toList());
        String toNodes = MoveTargets.nodes(targets.stream().map(MoveTargets.Target::node).toList());
        // managed rows: updated when the session flushes
        job.migrationTargets = MoveTargets.toJson(targets);
        job.evictingUntil = now.plus(grace);
        job.evictReason = "migrating from " + fromNodes + " to " + toNodes;
        JobMigration row = new JobMigration();
        row.jobId = job.jobId;
        row.queue = job.queue;
        row.fromNodes = fromNodes;
        row.toNodes = toNodes;
        row.startedAt = now;
        writes.insert(row);
        writes.event(Subjects.PLACEMENTS_MIGRATED, job.jobId, new PlacementMigrated(job.jobId, job.queue, PlacementMigrated.STOPPING,
                fromNodes, toNodes, (consolidation == null ? "defragmenting" : "scheduled consolidation, " + consolidation)
                        + "; checkpoint grace " + grace.toSeconds() + "s", now, job.evictingUntil, List.of()));
        LOG.infof("job %s migrating from %s to %s: told to stop, grace until %s", job.jobId, fromNodes, toNodes, job.evictingUntil);
        return new Started(job.jobId, grace, gang);
    }

    static DisruptionBudget.Spent spentOf(List<JobMigration> recent) {
        DisruptionBudget.Spent spent = DisruptionBudget.Spent.NONE;
        for (JobMigration m : recent) {
            spent = spent.plus(m.queue);
        }
        return spent;
    }
}
