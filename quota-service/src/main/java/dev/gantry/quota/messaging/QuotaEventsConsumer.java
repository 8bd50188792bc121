package dev.gantry.quota.messaging;

import com.fasterxml.jackson.databind.JsonNode;
import dev.gantry.contracts.events.EventCodec;
import dev.gantry.contracts.events.EventEnvelope;
import dev.gantry.contracts.events.MalformedEventException;
import dev.gantry.contracts.events.Subjects;
import dev.gantry.contracts.jobs.JobQueued;
import dev.gantry.contracts.placements.PlacementBound;
import dev.gantry.contracts.placements.PlacementReleased;
import dev.gantry.kit.inbox.EventBatch;
import dev.gantry.kit.inbox.EventBatches;
import dev.gantry.kit.inbox.ProcessedEvents;
import dev.gantry.quota.persistence.AdmissionReservations;
import dev.gantry.quota.persistence.AllocationEntity;
import dev.gantry.quota.persistence.DemandStore;
import dev.gantry.quota.persistence.EndedJobEntity;
import dev.gantry.quota.persistence.NodeCapacityEntity;
import dev.gantry.quota.persistence.PendingJobEntity;
import dev.gantry.quota.persistence.ReleasedJobEntity;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.hibernate.reactive.panache.Panache;
import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.function.Function;
import org.eclipse.microprofile.reactive.messaging.Acknowledgment;
import org.eclipse.microprofile.reactive.messaging.Incoming;
import org.eclipse.microprofile.reactive.messaging.Message;
import org.eclipse.microprofile.reactive.messaging.Outgoing;
import org.jboss.logging.Logger;

/**
 * What fair share needs from other services, on durable JetStream consumers of quota's own: pending
 * demand from {@code jobs.*}, allocations (and so usage) from {@code placements.*}, capacity from
 * {@code nodes.*}. A burst is applied in batches, in order, in one transaction ({@link EventBatches}),
 * runs of {@code jobs.queued} and of {@code placements.bound} in one statement each ({@link DemandStore}),
 * each event together with its id in the inbox, so a redelivered event changes nothing the second
 * time; an event that cannot be applied is nacked alone and JetStream redelivers it.
 * Events of different streams may cross: a job bound before its jobs.queued arrives is not made
 * pending again, and a bound event older than the job's release is ignored.
 */
@ApplicationScoped
public class QuotaEventsConsumer {

    private static final Logger LOG = Logger.getLogger(QuotaEventsConsumer.class);

    private final ProcessedEvents processed;
    private final MeterRegistry registry;

    private final EventBatches batches;
    private final DemandStore demand;

    public QuotaEventsConsumer(ProcessedEvents processed, EventBatches batches, DemandStore demand, MeterRegistry registry) {
        this.processed = processed;
        this.demand = demand;
        this.batches = batches;
        this.registry = registry;
    }

    @Incoming("jobs-in")
    @Outgoing("jobs-batches")
    @Acknowledgment(Acknowledgment.Strategy.MANUAL)
    public Multi<Message<EventBatch<JsonNode>>> jobsBatches(Multi<Message<JsonNode>> events) {
        return batches.group(events);
    }

    @Incoming("jobs-batches")
    public Uni<Void> onJobEvents(EventBatch<JsonNode> batch) {
        return batches.apply(Subjects.JOBS_STREAM, batch,
                events -> EventBatches.inRuns(events, this::plainQueued, this::queuedRun, this::onJobEvent), this::onJobEvent);
    }

    /** A {@code jobs.queued} the set-based store can take, or empty (another type, or one that does not decode). */
    private Optional<DemandStore.Queued> plainQueued(JsonNode event) {
        if (!Subjects.JOBS_QUEUED.equals(event.path("type").asText(""))) {
            return Optional.empty();
        }
        try {
            EventEnvelope<JobQueued> envelope = EventCodec.decode(event, JobQueued.class);
            JobQueued job = envelope.payload();
            if (job.jobId() == null || job.queue() == null || job.taskGroups() == null) {
                return Optional.empty();
            }
            return Optional.of(new DemandStore.Queued(envelope.eventId(), job.jobId(), job.queue(), job.owner(), job.totalGpus(),
                    cpuMillis(job), memoryMiB(job), job.submittedAt() != null ? job.submittedAt() : envelope.occurredAt()));
        } catch (MalformedEventException | IllegalArgumentException e) {
            return Optional.empty();
        }
    }

    private Uni<Void> queuedRun(List<DemandStore.Queued> run) {
        return demand.queuedAll(run).invoke(outcome -> {
            counter(Subjects.JOBS_STREAM, "applied").increment(outcome.fresh());
            counter(Subjects.JOBS_STREAM, "duplicate").increment(run.size() - outcome.fresh());
            counter(Subjects.JOBS_STREAM, "stale").increment(outcome.stale());
        }).replaceWithVoid();
    }

    Uni<Void> onJobEvent(JsonNode event) {
        return dispatch(Subjects.JOBS_STREAM, event, type -> switch (type) {
            case Subjects.JOBS_QUEUED -> applyOnce(Subjects.JOBS_STREAM, EventCodec.decode(event, JobQueued.class), this::jobQueued);
            case Subjects.JOBS_CANCELLED -> applyOnce(Subjects.JOBS_STREAM, EventCodec.decode(event, JsonNode.class), this::jobCancelled);
            default -> null;
        });
    }

    @Incoming("placements-in")
    @Outgoing("placements-batches")
    @Acknowledgment(Acknowledgment.Strategy.MANUAL)
    public Multi<Message<EventBatch<JsonNode>>> placementsBatches(Multi<Message<JsonNode>> events) {
        return batches.group(events);
    }

    @Incoming("placements-batches")
    public Uni<Void> onPlacementEvents(EventBatch<JsonNode> batch) {
        return batches.apply(Subjects.PLACEMENTS_STREAM, batch,
                events -> EventBatches.inRuns(events, this::plainBound, this::boundRun, this::onPlacementEvent), this::onPlacementEvent);
    }

    /** A {@code placements.bound} the set-based store can take, or empty. */
    private Optional<DemandStore.Bound> plainBound(JsonNode event) {
        if (!Subjects.PLACEMENTS_BOUND.equals(event.path("type").asText(""))) {
            return Optional.empty();
        }
        try {
            EventEnvelope<PlacementBound> envelope = EventCodec.decode(event, PlacementBound.class);
            PlacementBound p = envelope.payload();
            if (p.jobId() == null || p.queue() == null) {
                return Optional.empty();
            }
            return Optional.of(new DemandStore.Bound(envelope.eventId(), p.jobId(), p.queue(), p.owner(), p.gpus(), p.gpuModel(),
                    p.cpuMillis(), p.memoryMiB(), p.boundAt() != null ? p.boundAt() : envelope.occurredAt()));
        } catch (MalformedEventException | IllegalArgumentException e) {
            return Optional.empty();
        }
    }

    private Uni<Void> boundRun(List<DemandStore.Bound> run) {
        return demand.boundAll(run).invoke(outcome -> {
            counter(Subjects.PLACEMENTS_STREAM, "applied").increment(outcome.fresh());
            counter(Subjects.PLACEMENTS_STREAM, "duplicate").increment(run.size() - outcome.fresh());
        }).replaceWithVoid();
    }

    Uni<Void> onPlacementEvent(JsonNode event) {
        return dispatch(Subjects.PLACEMENTS_STREAM, event, type -> switch (type) {
            case Subjects.PLACEMENTS_BOUND -> applyOnce(Subjects.PLACEMENTS_STREAM, EventCodec.decode(event, PlacementBound.class), this::bound);
            case Subjects.PLACEMENTS_PREEMPTED, Subjects.PLACEMENTS_FAILED, Subjects.PLACEMENTS_REQUEUED, Subjects.PLACEMENTS_COMPLETED ->
                    applyOnce(Subjects.PLACEMENTS_STREAM, EventCodec.decode(event, PlacementReleased.class), this::released);
            default -> null; // placements.migrated: the job keeps what it holds
        });
    }

    @Incoming("nodes-in")
    @Outgoing("nodes-batches")
    @Acknowledgment(Acknowledgment.Strategy.MANUAL)
    public Multi<Message<EventBatch<JsonNode>>> nodesBatches(Multi<Message<JsonNode>> events) {
        return batches.group(events);
    }

    @Incoming("nodes-batches")
    public Uni<Void> onNodeEvents(EventBatch<JsonNode> batch) {
        return batches.apply(Subjects.NODES_STREAM, batch, this::onNodeEvent);
    }

    Uni<Void> onNodeEvent(JsonNode event) {
        return dispatch(Subjects.NODES_STREAM, event, type -> switch (type) {
            case Subjects.NODES_UPSERTED -> applyOnce(Subjects.NODES_STREAM, EventCodec.decode(event, JsonNode.class), this::nodeUpserted);
            case Subjects.NODES_REMOVED -> applyOnce(Subjects.NODES_STREAM, EventCodec.decode(event, JsonNode.class), this::nodeRemoved);
            default -> null;
        });
    }

    private Uni<Void> dispatch(String stream, JsonNode event, Function<String, Uni<Void>> handler) {
        String type = event == null ? "" : event.path("type").asText("");
        try {
            Uni<Void> handled = handler.apply(type);
            if (handled == null) {
                LOG.debugf("ignoring %s event", type);
                return Uni.createFrom().voidItem();
            }
            return handled;
        } catch (MalformedEventException | IllegalArgumentException e) {
            // retrying cannot mend it: count it, log it, and acknowledge it
            count(stream, "malformed");
            LOG.errorf("dropping malformed %s event: %s", type, e.getMessage());
            return Uni.createFrom().voidItem();
        }
    }

    private void count(String stream, String outcome) {
        counter(stream, outcome).increment();
    }

    private Counter counter(String stream, String outcome) {
        return registry.counter("gantry.events.consumed", "stream", stream, "outcome", outcome);
    }

    private static long cpuMillis(JobQueued job) {
        return job.taskGroups().stream().mapToLong(g -> g.replicas() * g.cpuMillis()).sum();
    }

    private static long memoryMiB(JobQueued job) {
        return job.taskGroups().stream().mapToLong(g -> g.replicas() * g.memoryMiB()).sum();
    }

    private <P> Uni<Void> applyOnce(String stream, EventEnvelope<P> envelope, Function<EventEnvelope<P>, Uni<Void>> change) {
        return processed.applyOnce(envelope, change);
    }

    private Uni<Void> jobQueued(EventEnvelope<JobQueued> envelope) {
        JobQueued job = envelope.payload();
        if (job.jobId() == null || job.queue() == null || job.taskGroups() == null) {
            throw new MalformedEventException("jobs.queued without jobId, queue or taskGroups");
        }
        // one after the other: a reactive session runs one statement at a time
        return AllocationEntity.<AllocationEntity>findById(job.jobId())
                .chain(bound -> EndedJobEntity.<EndedJobEntity>findById(job.jobId()).chain(ended -> {
                    if (bound != null) {
                        return Uni.createFrom().voidItem(); // already running: not pending demand
                    }
                    if (ended != null) {
                        count(Subjects.JOBS_STREAM, "stale"); // delivered late or again after the job ended
                        return Uni.createFrom().voidItem();
                    }
                    return storePending(envelope, job);
                }));
    }

    private static Uni<Void> storePending(EventEnvelope<JobQueued> envelope, JobQueued job) {
        return AdmissionReservations.release(job.jobId()).chain(() -> PendingJobEntity.<PendingJobEntity>findById(job.jobId()).chain(existing -> {
            PendingJobEntity row = existing != null ? existing : new PendingJobEntity();
            row.jobId = job.jobId();
            row.queue = job.queue();
            row.owner = job.owner();
            row.gpus = job.totalGpus();
            row.cpuMillis = cpuMillis(job);
            row.memoryMiB = memoryMiB(job);
            row.queuedAt = job.submittedAt() != null ? job.submittedAt() : envelope.occurredAt();
            return row.persist().replaceWithVoid();
        }));
    }

    private Uni<Void> jobCancelled(EventEnvelope<JsonNode> envelope) {
        UUID jobId = UUID.fromString(envelope.payload().path("jobId").asText(envelope.subjectId()));
        return EndedJobEntity.record(jobId, envelope.occurredAt()).chain(() -> PendingJobEntity.deleteById(jobId))
                .chain(() -> AdmissionReservations.release(jobId)).replaceWithVoid();
    }

    private Uni<Void> bound(EventEnvelope<PlacementBound> envelope) {
        PlacementBound p = envelope.payload();
        if (p.jobId() == null || p.queue() == null) {
            throw new MalformedEventException("placements.bound without jobId or queue");
        }
        Instant boundAt = p.boundAt() != null ? p.boundAt() : envelope.occurredAt();
        return ReleasedJobEntity.<ReleasedJobEntity>findById(p.jobId()).chain(released -> {
            if (released != null && !boundAt.isAfter(released.releasedAt)) {
                return Uni.createFrom().voidItem(); // its release came first: it holds nothing
            }
            return AllocationEntity.<AllocationEntity>findById(p.jobId()).chain(existing -> {
                AllocationEntity row = existing != null ? existing : new AllocationEntity();
                row.jobId = p.jobId();
                row.queue = p.queue();
                row.owner = p.owner();
                row.gpus = p.gpus();
                row.gpuModel = p.gpuModel();
                row.cpuMillis = p.cpuMillis();
                row.memoryMiB = p.memoryMiB();
                row.boundAt = boundAt;
                return row.persist().chain(() -> PendingJobEntity.deleteById(p.jobId())).replaceWithVoid();
            });
        });
    }

    private Uni<Void> released(EventEnvelope<PlacementReleased> envelope) {
        PlacementReleased p = envelope.payload();
        if (p.jobId() == null) {
            throw new MalformedEventException(envelope.type() + " without jobId");
        }
        Instant at = p.releasedAt() != null ? p.releasedAt() : envelope.occurredAt();
        boolean ended = Subjects.PLACEMENTS_COMPLETED.equals(envelope.type()) || Subjects.PLACEMENTS_FAILED.equals(envelope.type());
        return AllocationEntity.deleteById(p.jobId())
                .chain(() -> ended ? EndedJobEntity.record(p.jobId(), at).chain(() -> PendingJobEntity.deleteById(p.jobId()))
                        : Uni.createFrom().voidItem())
                .chain(() -> ReleasedJobEntity.<ReleasedJobEntity>findById(p.jobId()))
                .chain(existing -> {
                    ReleasedJobEntity row = existing != null ? existing : new ReleasedJobEntity();
                    row.jobId = p.jobId();
                    row.releasedAt = existing != null && existing.releasedAt.isAfter(at) ? existing.releasedAt : at;
                    return row.persist().replaceWithVoid();
                });
    }

    /** {@code nodes.upserted} carries the node either as the payload or under {@code node} (with a snapshot version). */
    private Uni<Void> nodeUpserted(EventEnvelope<JsonNode> envelope) {
        JsonNode node = envelope.payload().has("node") ? envelope.payload().get("node") : envelope.payload();
        String name = node.path("name").asText(envelope.subjectId());
        return NodeCapacityEntity.<NodeCapacityEntity>findById(name).chain(existing -> {
            NodeCapacityEntity row = existing != null ? existing : new NodeCapacityEntity();
            row.name = name;
            row.gpuModel = node.hasNonNull("gpuModel") ? node.get("gpuModel").asText() : null;
            row.gpus = node.path("gpus").asInt(0);
            row.cpuMillis = node.path("cpuMillis").asLong(0);
            row.memoryMiB = node.path("memoryMiB").asLong(0);
            String health = node.path("health").asText("READY");
            row.ready = node.path("schedulable").asBoolean(true) && !node.path("cordoned").asBoolean(false) && "READY".equals(health);
            row.updatedAt = Instant.now();
            return row.persist().replaceWithVoid();
        });
    }

    private Uni<Void> nodeRemoved(EventEnvelope<JsonNode> envelope) {
        String name = envelope.payload().path("name").asText(envelope.subjectId());
        return NodeCapacityEntity.deleteById(name).replaceWithVoid();
    }
}
