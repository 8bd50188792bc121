package dev.gantry.placement.window;

import dev.gantry.contracts.events.EventCodec;
import dev.gantry.contracts.events.Subjects;
import dev.gantry.contracts.jobs.JobQueued;
import dev.gantry.contracts.placements.PlacementReleased;
import dev.gantry.kit.outbox.Outbox;
import dev.gantry.placement.cluster.ClusterActuator;
import dev.gantry.placement.cluster.LeaderFence;
import dev.gantry.placement.engine.domain.Preemption;
import dev.gantry.placement.persistence.Allocation;
import dev.gantry.placement.persistence.JobPreemption;
import dev.gantry.placement.persistence.RunningJobRecord;
import io.quarkus.hibernate.reactive.panache.Panache;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.jboss.logging.Logger;

/**
 * Records a plan's preemptions, each fenced transaction with its events in the outbox. A victim
 * placed again after an earlier preemption is protected for {@code gantry.placement.preemption.protection}
 * and is not touched. A checkpointable victim is told first ({@code placements.preempted}) and keeps
 * its GPUs for its grace period: the job's {@code checkpointGraceSeconds}, else
 * {@code gantry.placement.preemption.grace-period} (node agents send its tasks SIGTERM at once and
 * SIGKILL when the grace is over; pods get it as their termination grace); any other victim is released at once
 * and returns to the pending set with its original submission time. The pods are the
 * {@link GangLauncher}'s.
 */
@ApplicationScoped
public class PreemptionRecorder {

    private static final Logger LOG = Logger.getLogger(PreemptionRecorder.class);

    /** What a preemption did: nothing, released at once, or told and still holding its GPUs until a deadline. */
    record Preempted(boolean done, Duration grace, ClusterActuator.GangRef gang) {
        static final Preempted NOTHING = new Preempted(false, Duration.ZERO, null);
    }

    private final Outbox outbox;
    private final LeaderFence fence;
    private final Gangs gangs;
    private final Duration gracePeriod;

    public PreemptionRecorder(Outbox outbox, LeaderFence fence, Gangs gangs,
            @ConfigProperty(name = "gantry.placement.preemption.grace-period", defaultValue = "30s") Duration gracePeriod) {
        this.outbox = outbox;
        this.fence = fence;
        this.gangs = gangs;
        this.gracePeriod = gracePeriod;
    }

    /** One victim, in a transaction of its own. */
    Uni<Preempted> record(UUID jobId, String reason) {
        return Panache.withTransaction(() -> fence.guard().chain(() -> startPreemption(jobId, reason)));
    }

    /**
     * A plan's victims, in one transaction: one read per table for all of them and the writes
     * batched, so a window that preempts many jobs pays a few round trips, not ~10 per job.
     */
    Uni<List<Preempted>> recordAll(List<Preemption> preemptions) {
        return Panache.withTransaction(() -> fence.guard().chain(() -> startPreemptions(preemptions)));
    }

    private Uni<Preempted> startPreemption(UUID jobId, String reason) {
        return RunningJobRecord.<RunningJobRecord>findById(jobId).chain(job -> job == null || !preemptible(job, Instant.now())
                ? Uni.createFrom().item(Preempted.NOTHING)
                : JobPreemption.<JobPreemption>findById(jobId).chain(count -> gangs.gangRef(jobId).chain(gang -> {
                    Instant now = Instant.now();
                    PlanWrites writes = new PlanWrites();
                    countPreemption(jobId, count, now, writes);
                    if (tellsFirst(job)) {
                        Preempted told = tell(job, reason, now, gang, writes);
                        return writes.apply(outbox).replaceWith(told);
                    }
                    Requeue.returnToPending(job, Subjects.PLACEMENTS_PREEMPTED, reason, writes);
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
        return PlanWrites.batching()
                .chain(() -> RunningJobRecord.<RunningJobRecord>list("jobId in ?1", ids))
                .chain(jobs -> JobPreemption.<JobPreemption>list("jobId in ?1", ids)
                        .chain(counts -> gangs.gangRefs(ids).chain(refs -> {
                            Map<UUID, RunningJobRecord> running = PlanWrites.byJob(jobs, j -> j.jobId);
                            Map<UUID, JobPreemption> countOf = PlanWrites.byJob(counts, c -> c.jobId);
                            Instant now = Instant.now();
                            List<Preempted> started = new ArrayList<>();
                            PlanWrites writes = new PlanWrites();
                            List<UUID> released = new ArrayList<>();
                            for (Preemption preemption : preemptions) {
                                UUID jobId = UUID.fromString(preemption.job());
                                RunningJobRecord job = running.remove(jobId); // removed: a victim named twice is preempted once
                                if (job == null || !preemptible(job, now)) {
                                    continue;
                                }
                                countPreemption(jobId, countOf.get(jobId), now, writes);
                                ClusterActuator.GangRef gang = refs.get(jobId);
                                if (tellsFirst(job)) {
                                    started.add(tell(job, preemption.reason(), now, gang, writes));
                                } else {
                                    released.add(jobId);
                                    Requeue.returnToPending(job, Subjects.PLACEMENTS_PREEMPTED, preemption.reason(), writes);
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

    /** A checkpointable victim with a grace period is told first and keeps its GPUs for it. */
    private boolean tellsFirst(RunningJobRecord job) {
        JobQueued spec = EventCodec.fromJson(job.spec, JobQueued.class);
        return spec.checkpointable() && graceOf(spec, gracePeriod).isPositive();
    }

    /** The victim's checkpoint grace: its own {@code checkpointGraceSeconds}, else {@code otherwise} (the configured default). */
    public static Duration graceOf(JobQueued spec, Duration otherwise) {
        return spec.checkpointGraceSeconds() != null ? Duration.ofSeconds(spec.checkpointGraceSeconds()) : otherwise;
    }

    /** Told first: the victim checkpoints while it still holds its GPUs. */
    private Preempted tell(RunningJobRecord job, String reason, Instant now, ClusterActuator.GangRef gang, PlanWrites writes) {
        Duration grace = graceOf(EventCodec.fromJson(job.spec, JobQueued.class), gracePeriod);
        GracefulStop.begin(job, now, grace, reason); // a managed row: updated when the session flushes
        String told = reason + " (checkpoint grace " + grace.toSeconds() + "s)";
        writes.event(Subjects.PLACEMENTS_PREEMPTED, job.jobId, new PlacementReleased(job.jobId, job.queue, told, job.evictingUntil));
        LOG.infof("job %s preempted, keeps its GPUs until %s: %s", job.jobId, job.evictingUntil, reason);
        return new Preempted(true, grace, gang);
    }

    /** One more preemption on the job's record ({@code row}: the record so far, a managed row; null for a first). */
    private static void countPreemption(UUID jobId, JobPreemption row, Instant now, PlanWrites writes) {
        JobPreemption p = row != null ? row : new JobPreemption();
        p.jobId = jobId;
        p.lastPreemptedAt = now;
        p.times = row == null ? 1 : row.times + 1;
        if (row == null) {
            writes.insert(p);
        }
    }
}
