package dev.gantry.placement.messaging;

import com.fasterxml.jackson.databind.JsonNode;
import dev.gantry.contracts.events.EventCodec;
import dev.gantry.contracts.events.EventEnvelope;
import dev.gantry.contracts.events.MalformedEventException;
import dev.gantry.contracts.events.Subjects;
import dev.gantry.contracts.jobs.JobCancelled;
import dev.gantry.contracts.jobs.JobQueued;
import dev.gantry.contracts.jobs.JobRefused;
import dev.gantry.contracts.placements.PodGangFormed;
import dev.gantry.kit.inbox.EventBatch;
import dev.gantry.kit.inbox.EventBatches;
import dev.gantry.kit.inbox.ProcessedEvents;
import dev.gantry.placement.persistence.ClusterGang;
import dev.gantry.placement.persistence.EndedJob;
import dev.gantry.placement.persistence.PendingJob;
import dev.gantry.placement.persistence.RunningJobRecord;
import dev.gantry.placement.window.StandaloneExecutor;
import dev.gantry.placement.window.WindowLoop;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import org.eclipse.microprofile.reactive.messaging.Acknowledgment;
import org.eclipse.microprofile.reactive.messaging.Incoming;
import org.eclipse.microprofile.reactive.messaging.Message;
import org.eclipse.microprofile.reactive.messaging.Outgoing;
import org.jboss.logging.Logger;

/**
 * Keeps the pending set from {@code jobs.*} on a durable JetStream consumer. The events of a burst
 * are applied in batches, in order, in one transaction ({@link EventBatches}); each is recorded
 * with its id in the inbox in that transaction, so a redelivered or republished event changes
 * nothing the second time. An event that cannot be applied is nacked alone and redelivered.
 */
@ApplicationScoped
public class JobEventsConsumer {

    private static final Logger LOG = Logger.getLogger(JobEventsConsumer.class);

    private final ProcessedEvents processed;
    private final StandaloneExecutor executor;
    private final WindowLoop windows;
    private final Counter malformed;
    private final Counter lateForEndedJob;

    private final Counter applied;
    private final Counter duplicates;
    private final EventBatches batches;
    private final QueuedJobsStore store;
    private final CancelledJobsStore cancellations;

    public JobEventsConsumer(ProcessedEvents processed, EventBatches batches, QueuedJobsStore store, CancelledJobsStore cancellations,
            StandaloneExecutor executor, WindowLoop windows, MeterRegistry registry) {
        this.batches = batches;
        this.store = store;
        this.cancellations = cancellations;
        this.windows = windows;
        this.processed = processed;
        this.executor = executor;
        this.malformed = registry.counter("gantry.events.consumed", "stream", Subjects.JOBS_STREAM, "outcome", "malformed");
        this.lateForEndedJob = registry.counter("gantry.events.consumed", "stream", Subjects.JOBS_STREAM, "outcome", "stale");
        // the same series ProcessedEvents counts for the events applied one at a time
        this.applied = registry.counter("gantry.events.consumed", "stream", Subjects.JOBS_STREAM, "outcome", "applied");
        this.duplicates = registry.counter("gantry.events.consumed", "stream", Subjects.JOBS_STREAM, "outcome", "duplicate");
    }

    @Incoming("jobs-in")
    @Outgoing("jobs-batches")
    @Acknowledgment(Acknowledgment.Strategy.MANUAL)
    public Multi<Message<EventBatch<JsonNode>>> batch(Multi<Message<JsonNode>> events) {
        return batches.group(events);
    }

    @Incoming("jobs-batches")
    public Uni<Void> onJobEvents(EventBatch<JsonNode> batch) {
        return batches.apply(Subjects.JOBS_STREAM, batch, this::onJobEventsTogether, this::onJobEvent);
    }

    /**
     * A batch in its transaction: each run of plain {@code jobs.queued} events (the bulk of a burst) is
     * stored by one statement ({@link QueuedJobsStore}), each run of cancellations that need nothing
     * done on a cluster by two ({@link CancelledJobsStore}); every other event (a pod gang's job, a
     * cancellation whose pods must be stopped, one that does not decode) is applied on its own between
     * the runs, so the batch's order is kept. The effect is that of {@link #onJobEvent} on each event in turn.
     */
    Uni<Void> onJobEventsTogether(List<JsonNode> events) {
        return EventBatches.inRuns(events, event -> Optional.ofNullable(runMember(event)), this::applyRuns, this::onJobEvent);
    }

    /** A queued or cancelled event a set-based store can take, or null. */
    private Object runMember(JsonNode event) {
        Object queued = plainQueued(event);
        return queued != null ? queued : executor.stopsPods() ? null : plainCancelled(event);
    }

    /** Consecutive events a set-based store takes: each stretch of one kind to its store, in order. */
    private Uni<Void> applyRuns(List<Object> members) {
        Uni<Void> chain = Uni.createFrom().voidItem();
        int from = 0;
        for (int i = 1; i <= members.size(); i++) {
            if (i == members.size() || members.get(i).getClass() != members.get(from).getClass()) {
                List<Object> stretch = members.subList(from, i);
                chain = chain.chain(() -> stretch.getFirst() instanceof QueuedJobsStore.Queued
                        ? storeRun(stretch.stream().map(QueuedJobsStore.Queued.class::cast).toList())
                        : cancelRun(stretch.stream().map(CancelledJobsStore.Cancelled.class::cast).toList()));
                from = i;
            }
        }
        return chain;
    }

    private Uni<Void> cancelRun(List<CancelledJobsStore.Cancelled> run) {
        return cancellations.cancelAll(run).invoke(outcome -> {
            applied.increment(outcome.fresh());
            duplicates.increment(run.size() - outcome.fresh());
            outcome.wasPending().forEach(job -> LOG.infof("job %s cancelled (was pending)", job));
            outcome.wasRunning().forEach(job -> LOG.infof("job %s cancelled (was running)", job));
        }).replaceWithVoid();
    }

    /** A {@code jobs.cancelled} with a job id, or null. */
    private static CancelledJobsStore.Cancelled plainCancelled(JsonNode event) {
        if (!Subjects.JOBS_CANCELLED.equals(event.path("type").asText(""))) {
            return null;
        }
        try {
            EventEnvelope<JobCancelled> envelope = EventCodec.decode(event, JobCancelled.class);
            JobCancelled cancelled = envelope.payload();
            return cancelled == null || cancelled.jobId() == null || envelope.eventId() == null ? null
                    : new CancelledJobsStore.Cancelled(envelope.eventId(), cancelled.jobId());
        } catch (MalformedEventException e) {
            return null;
        }
    }

    private Uni<Void> storeRun(List<QueuedJobsStore.Queued> run) {
        if (run.isEmpty()) {
            return Uni.createFrom().voidItem();
        }
        return store.storeAll(run, Instant.now()).invoke(outcome -> {
            applied.increment(outcome.fresh());
            duplicates.increment(run.size() - outcome.fresh());
            lateForEndedJob.increment(outcome.late());
            run.forEach(queued -> recordArrival(queued.job()));
        }).replaceWithVoid();
    }

    /** A {@code jobs.queued} the set-based store can take (with its format defaults applied), or null. */
    private static QueuedJobsStore.Queued plainQueued(JsonNode event) {
        if (!Subjects.JOBS_QUEUED.equals(event.path("type").asText(""))) {
            return null;
        }
        try {
            EventEnvelope<JobQueued> envelope = EventCodec.decode(event, JobQueued.class);
            JobQueued job = envelope.payload();
            if (job == null || job.jobId() == null || job.queue() == null || job.taskGroups() == null
                    || job.taskGroups().isEmpty() || PodGangFormed.isPodGangOwner(job.owner())) {
                return null;
            }
            return new QueuedJobsStore.Queued(envelope.eventId(), withDefaults(job, envelope.occurredAt()));
        } catch (MalformedEventException e) {
            return null;
        }
    }

    /** One event, inside the batch's transaction (or its own, when the batch is applied one at a time). */
    Uni<Void> onJobEvent(JsonNode event) {
        String type = event.path("type").asText("");
        try {
            return switch (type) {
                case Subjects.JOBS_QUEUED -> {
                    Instant received = Instant.now();
                    EventEnvelope<JobQueued> queued = EventCodec.decode(event, JobQueued.class);
                    yield applyOnce(queued, e -> storePending(e, received)).invoke(() -> recordArrival(queued.payload()));
                }
                case Subjects.JOBS_CANCELLED -> applyOnce(EventCodec.decode(event, JobCancelled.class), this::cancel);
                case Subjects.JOBS_REFUSED -> applyOnce(EventCodec.decode(event, JobRefused.class), this::refused);
                default -> {
                    LOG.debugf("ignoring %s event (not handled yet)", type);
                    yield Uni.createFrom().voidItem();
                }
            };
        } catch (MalformedEventException e) {
            // retrying cannot mend it: count it, log it, and acknowledge it
            malformed.increment();
            LOG.errorf("dropping malformed %s event: %s", type, e.getMessage());
            return Uni.createFrom().voidItem();
        }
    }

    /**
     * After the job is stored (committed): count it in the workload the planners keep room for. With
     * several replicas each counts the arrivals it consumed: a random share of them, so the mix of
     * shapes stays the same. The fast path is offered by the {@link QueuedJobSignal} the store sent.
     */
    private void recordArrival(JobQueued job) {
        if (job.jobId() != null) {
            windows.recordArrival(job);
        }
    }

    private <P> Uni<Void> applyOnce(EventEnvelope<P> envelope, java.util.function.Function<EventEnvelope<P>, Uni<Void>> change) {
        return processed.applyOnce(envelope, change);
    }

    private Uni<Void> storePending(EventEnvelope<JobQueued> envelope, Instant received) {
        JobQueued job = envelope.payload();
        if (job.jobId() == null || job.queue() == null || job.taskGroups() == null || job.taskGroups().isEmpty()) {
            // cannot be planned, and retrying cannot mend it: counted, logged, acknowledged
            malformed.increment();
            LOG.errorf("dropping jobs.queued %s without job id, queue or task groups", envelope.eventId());
            return Uni.createFrom().voidItem();
        }
        JobQueued accepted = withDefaults(job, envelope.occurredAt());
        return EndedJob.ended(accepted.jobId()).chain(ended -> {
            if (ended) {
                // delivered late or again after its cancellation or end: it must not run (again)
                lateForEndedJob.increment();
                LOG.infof("job %s has ended, jobs.queued %s ignored", accepted.jobId(), envelope.eventId());
                return Uni.createFrom().voidItem();
            }
            return RunningJobRecord.<RunningJobRecord>findById(accepted.jobId()).chain(running -> {
                if (running != null) {
                    LOG.debugf("job %s already placed, jobs.queued ignored", accepted.jobId());
                    return Uni.createFrom().voidItem();
                }
                if (PodGangFormed.isPodGangOwner(accepted.owner())) {
                    return podGangStillThere(accepted.jobId()).chain(there -> there
                            ? storeNew(accepted).chain(() -> QueuedJobSignal.send(accepted.jobId(), received))
                            : Uni.createFrom().voidItem());
                }
                return storeNew(accepted).chain(() -> QueuedJobSignal.send(accepted.jobId(), received));
            });
        });
    }

    /** The format's defaults: submitted when admitted (the event's time), named by its id. */
    private static JobQueued withDefaults(JobQueued job, Instant occurredAt) {
        if (job.submittedAt() != null && job.name() != null) {
            return job;
        }
        return new JobQueued(job.jobId(), job.name() == null ? job.jobId().toString() : job.name(), job.queue(), job.owner(),
                job.priority(), job.submittedAt() == null ? occurredAt : job.submittedAt(), job.minAvailable(),
                job.taskGroups(), job.gpuModels(), job.gpuTopology(), job.network(), job.requireInfiniBand(),
                job.nodeSelector(), job.tolerations(), job.preemptible(), job.checkpointable(), job.estimatedRuntimeSeconds(),
                job.checkpointGraceSeconds());
    }

    /**
     * A user's pod gang admission queued: planned only while its pods' gang still exists here. One
     * withdrawn meanwhile (its pods gone; admission cancels it) would otherwise be launched as an API
     * job, with pods made from a spec that has no image.
     */
    private static Uni<Boolean> podGangStillThere(UUID jobId) {
        return ClusterGang.<ClusterGang>findById(jobId).map(gang -> {
            if (gang == null || !gang.userPods) {
                LOG.infof("job %s: its pod gang is gone, jobs.queued ignored", jobId);
                return false;
            }
            return true;
        });
    }

    /** Admission refused a user's pod gang: its pods wait, and say why in the log, until they change. */
    private Uni<Void> refused(EventEnvelope<JobRefused> envelope) {
        JobRefused refused = envelope.payload();
        if (refused.jobId() == null) {
            malformed.increment();
            return Uni.createFrom().voidItem();
        }
        return ClusterGang.<ClusterGang>findById(refused.jobId()).chain(gang -> {
            if (gang == null || !gang.userPods) {
                return Uni.createFrom().voidItem();
            }
            LOG.warnf("gang %s/%s refused by admission: %s", gang.namespace, gang.gangLabel, refused.reason());
            gang.refusedReason = refused.reason() == null ? "refused" : refused.reason();
            gang.refusedAt = Instant.now();
            return gang.persist().replaceWithVoid();
        });
    }

    private Uni<Void> storeNew(JobQueued job) {
        return PendingJob.<PendingJob>findById(job.jobId()).chain(existing -> {
            PendingJob pending = existing != null ? existing : new PendingJob();
            pending.jobId = job.jobId();
            pending.name = job.name();
            pending.queue = job.queue();
            pending.priority = job.priority();
            pending.totalGpus = job.totalGpus();
            pending.spec = EventCodec.toJson(job);
            pending.submittedAt = job.submittedAt();
            pending.receivedAt = Instant.now();
            return pending.persist().replaceWithVoid();
        });
    }

    /**
     * A cancelled job leaves a tombstone and the pending set; if it runs, its GPUs are released
     * (placements.completed, "cancelled"). The tombstone is left even for a job not seen yet: its
     * jobs.queued may still be on its way.
     */
    private Uni<Void> cancel(EventEnvelope<JobCancelled> envelope) {
        JobCancelled cancelled = envelope.payload();
        if (cancelled.jobId() == null) {
            malformed.increment();
            LOG.errorf("dropping jobs.cancelled %s without job id", envelope.eventId());
            return Uni.createFrom().voidItem();
        }
        return EndedJob.record(cancelled.jobId(), "cancelled")
                .chain(() -> PendingJob.deleteById(cancelled.jobId()))
                .chain(wasPending -> executor.release(cancelled.jobId(), "cancelled").invoke(wasRunning -> {
                    if (wasPending || wasRunning) {
                        LOG.infof("job %s cancelled (%s)", cancelled.jobId(), wasPending ? "was pending" : "was running");
                    }
                }))
                .replaceWithVoid();
    }
}
