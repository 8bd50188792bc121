package dev.gantry.admission.messaging;

import com.fasterxml.jackson.databind.JsonNode;
import dev.gantry.admission.PodGangAdmission;
import dev.gantry.admission.domain.JobPlacement;
import dev.gantry.admission.domain.JobState;
import dev.gantry.admission.domain.PlacementReport;
import dev.gantry.admission.persistence.JobHistoryEntry;
import dev.gantry.admission.persistence.JobEntity;
import dev.gantry.contracts.events.EventCodec;
import dev.gantry.contracts.events.EventEnvelope;
import dev.gantry.contracts.events.MalformedEventException;
import dev.gantry.contracts.events.Subjects;
import dev.gantry.contracts.placements.PlacementBound;
import dev.gantry.contracts.placements.PlacementMigrated;
import dev.gantry.contracts.placements.PlacementPending;
import dev.gantry.contracts.placements.PlacementReleased;
import dev.gantry.contracts.placements.PodGangDissolved;
import dev.gantry.contracts.placements.PodGangFormed;
import dev.gantry.kit.inbox.EventBatch;
import dev.gantry.kit.inbox.EventBatches;
import dev.gantry.kit.inbox.ProcessedEvents;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.quarkus.hibernate.reactive.panache.Panache;
import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import java.util.function.Function;
import org.eclipse.microprofile.reactive.messaging.Acknowledgment;
import org.eclipse.microprofile.reactive.messaging.Incoming;
import org.eclipse.microprofile.reactive.messaging.Message;
import org.eclipse.microprofile.reactive.messaging.Outgoing;
import org.jboss.logging.Logger;

/**
 * Moves jobs through their lifecycle as placement reports on {@code placements.*}: bound gangs are
 * PLACED, preempted and requeued ones go back to QUEUED with their original submission time and the
 * reason, completed ones SUCCEED, failed ones FAIL; a queued job's pending reason is what the last
 * window said of it. Each event is applied once (inbox by event id) and in placement's order (its
 * sequence, {@link PlacementReport}), in the transaction of the change, with a step in the job's
 * history; a stale event (older than the last applied, or about a job that ended) is counted and skipped.
 * Gangs users form from their own pods ({@code placements.gang-formed}, {@code placements.gang-dissolved})
 * are admitted or withdrawn by {@link PodGangAdmission}.
 * A burst is applied in batches, in order, in one transaction ({@link EventBatches}); an event that
 * cannot be applied is nacked alone and redelivered.
 */
@ApplicationScoped
public class PlacementEventsConsumer {

    private static final Logger LOG = Logger.getLogger(PlacementEventsConsumer.class);

    private final ProcessedEvents processed;
    private final MeterRegistry registry;
    private final Timer queueWait;

    private final EventBatches batches;
    private final PodGangAdmission podGangs;

    public PlacementEventsConsumer(ProcessedEvents processed, EventBatches batches, PodGangAdmission podGangs, MeterRegistry registry) {
        this.processed = processed;
        this.podGangs = podGangs;
        this.batches = batches;
        this.registry = registry;
        this.queueWait = Timer.builder("gantry.admission.queue.wait")
                .description("time from submission to placement")
                .publishPercentileHistogram()
                .minimumExpectedValue(Duration.ofSeconds(1))
                .maximumExpectedValue(Duration.ofDays(7))
                .register(registry);
    }

    @Incoming("placements-in")
    @Outgoing("placements-batches")
    @Acknowledgment(Acknowledgment.Strategy.MANUAL)
    public Multi<Message<EventBatch<JsonNode>>> placementBatches(Multi<Message<JsonNode>> events) {
        return batches.group(events);
    }

    @Incoming("placements-batches")
    public Uni<Void> onPlacementEvents(EventBatch<JsonNode> batch) {
        return batches.apply(Subjects.PLACEMENTS_STREAM, batch, this::onPlacementEvent);
    }

    /** One event, inside the batch's transaction (or its own, when the batch is applied one at a time). */
    Uni<Void> onPlacementEvent(JsonNode event) {
        String type = event.path("type").asText("");
        try {
            return switch (type) {
                case Subjects.PLACEMENTS_BOUND -> {
                    EventEnvelope<PlacementBound> bound = EventCodec.decode(event, PlacementBound.class);
                    yield applyInOrder(bound, bound.payload().jobId(), PlacementReport.BOUND, null, job -> {
                        queueWait.record(Duration.between(job.submittedAt, bound.payload().boundAt()).abs());
                        // a new attempt: where it runs now; the last attempt's exit code is no longer this one's
                        job.attempts++;
                        job.placement = JobPlacement.of(job.attempts, bound.payload()).toJson();
                        job.exitCode = null;
                        return null;
                    });
                }
                case Subjects.PLACEMENTS_PREEMPTED -> released(event, PlacementReport.PREEMPTED, r -> "preempted: " + r + "; waiting to be placed again");
                case Subjects.PLACEMENTS_REQUEUED -> released(event, PlacementReport.REQUEUED, r -> "requeued: " + r + "; waiting to be placed again");
                case Subjects.PLACEMENTS_FAILED -> released(event, PlacementReport.FAILED, r -> r);
                case Subjects.PLACEMENTS_COMPLETED -> released(event, PlacementReport.COMPLETED, r -> null);
                case Subjects.PLACEMENTS_MIGRATED -> {
                    EventEnvelope<PlacementMigrated> migrated = EventCodec.decode(event, PlacementMigrated.class);
                    PlacementMigrated m = migrated.payload();
                    boolean abandoned = PlacementMigrated.ABANDONED.equals(m.phase());
                    // each step in the job's history; once moved, a new attempt where it runs now
                    yield applyInOrder(migrated, m.jobId(), abandoned ? PlacementReport.MIGRATION_ABANDONED : PlacementReport.MIGRATED,
                            m.describe(), !PlacementMigrated.MOVED.equals(m.phase()) ? null : job -> {
                                job.attempts++;
                                job.placement = JobPlacement.moved(job.attempts, m).toJson();
                                job.exitCode = null;
                                return null;
                            });
                }
                case Subjects.PLACEMENTS_PENDING -> {
                    EventEnvelope<PlacementPending> pending = EventCodec.decode(event, PlacementPending.class);
                    yield applyInOrder(pending, pending.payload().jobId(), PlacementReport.PENDING, pending.payload().reason(), null);
                }
                case Subjects.PLACEMENTS_GANG_FORMED -> processed.applyOnce(EventCodec.decode(event, PodGangFormed.class),
                        formed -> podGangs.formed(formed.payload()));
                case Subjects.PLACEMENTS_GANG_DISSOLVED -> processed.applyOnce(EventCodec.decode(event, PodGangDissolved.class),
                        dissolved -> podGangs.dissolved(dissolved.payload()));
                default -> Uni.createFrom().voidItem();
            };
        } catch (MalformedEventException e) {
            outcome("malformed");
            LOG.errorf("dropping malformed %s event: %s", type, e.getMessage());
            return Uni.createFrom().voidItem();
        }
    }

    private Uni<Void> released(JsonNode event, PlacementReport report, Function<String, String> reasonShown) {
        EventEnvelope<PlacementReleased> released = EventCodec.decode(event, PlacementReleased.class);
        Integer exitCode = released.payload().exitCode();
        // the placement stays as the record of where the job ran; an exit code, when reported, says how it ended
        return applyInOrder(released, released.payload().jobId(), report, reasonShown.apply(released.payload().reason()),
                exitCode == null ? null : job -> {
                    job.exitCode = exitCode;
                    return null;
                });
    }

    /**
     * Applies a report once (inbox by event id, in the transaction of the change) and in placement's
     * order (by its sequence, see {@link PlacementReport}); a stale report is recorded and changes nothing.
     */
    private Uni<Void> applyInOrder(EventEnvelope<?> envelope, UUID jobId, PlacementReport report, String reason,
            Function<JobEntity, Void> onApplied) {
        return Panache.withTransaction(() -> processed.markFirstSeen(envelope.eventId(), envelope.type()).chain(first -> {
            if (!first) {
                outcome("duplicate");
                return Uni.createFrom().voidItem();
            }
            return JobEntity.<JobEntity>findById(jobId).chain(job -> {
                if (job == null) {
                    outcome("unknown-job");
                    return Uni.createFrom().voidItem();
                }
                Optional<JobState> next = report.apply(job.state, job.placementSequence, envelope.sequence());
                if (next.isEmpty()) {
                    outcome("stale");
                    LOG.infof("%s for job %s ignored: the job is %s (report %d, last applied %d)", envelope.type(), jobId, job.state,
                            envelope.sequence(), job.placementSequence);
                    return Uni.createFrom().voidItem();
                }
                boolean stateChanged = next.get() != job.state;
                boolean reasonChanged = !Objects.equals(reason, job.pendingReason);
                job.state = next.get();
                job.pendingReason = reason;
                job.placementSequence = Math.max(job.placementSequence, envelope.sequence());
                job.updatedAt = Instant.now();
                outcome("applied");
                if (onApplied != null) {
                    onApplied.apply(job);
                }
                // a waiting job's reason changes often; its history keeps the moves between states
                boolean worthAStep = stateChanged || (report != PlacementReport.PENDING && reasonChanged);
                return worthAStep ? JobHistoryEntry.record(job.id, job.state, reason, envelope.type()) : Uni.createFrom().voidItem();
            });
        }));
    }

    private void outcome(String outcome) {
        registry.counter("gantry.events.consumed", "stream", Subjects.PLACEMENTS_STREAM, "outcome", outcome).increment();
    }
}
