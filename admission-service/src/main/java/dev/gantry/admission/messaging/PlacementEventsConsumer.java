package dev.gantry.admission.messaging;

import com.fasterxml.jackson.databind.JsonNode;
import dev.gantry.admission.PodGangAdmission;
import dev.gantry.admission.domain.JobPlacement;
import dev.gantry.admission.domain.PlacementReport;
import dev.gantry.admission.domain.JobProgress;
import dev.gantry.admission.persistence.JobProgressStore;
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
import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.function.Consumer;
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
 * A burst is applied in batches, in order, in one transaction ({@link EventBatches}), each run of job
 * reports in a few set-based statements ({@link JobProgressStore}); an event that cannot be applied is
 * nacked alone and redelivered.
 */
@ApplicationScoped
public class PlacementEventsConsumer {

    private static final Logger LOG = Logger.getLogger(PlacementEventsConsumer.class);

    private final ProcessedEvents processed;
    private final MeterRegistry registry;
    private final Timer queueWait;

    private final EventBatches batches;
    private final PodGangAdmission podGangs;
    private final JobProgressStore store;

    public PlacementEventsConsumer(ProcessedEvents processed, EventBatches batches, PodGangAdmission podGangs, JobProgressStore store,
            MeterRegistry registry) {
        this.processed = processed;
        this.store = store;
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
        return batches.apply(Subjects.PLACEMENTS_STREAM, batch, this::onPlacementEventsTogether, this::onPlacementEvent);
    }

    /**
     * A batch inside one transaction: each run of reports about jobs is applied by the store in a few
     * statements; a gang's event (or one that does not decode) is applied on its own between the runs,
     * so the batch's order is kept.
     */
    Uni<Void> onPlacementEventsTogether(List<JsonNode> events) {
        return EventBatches.inRuns(events, this::reportOf, this::applyReports, this::onOtherEvent);
    }

    /** One event, in its own transaction (when its batch could not be applied together). */
    Uni<Void> onPlacementEvent(JsonNode event) {
        Optional<JobProgressStore.Report> report = reportOf(event);
        return report.isPresent() ? applyReports(List.of(report.get())) : onOtherEvent(event);
    }

    /** A report about one job's lifecycle, decoded; empty for gangs' events and what does not decode. */
    private Optional<JobProgressStore.Report> reportOf(JsonNode event) {
        String type = event.path("type").asText("");
        try {
            return Optional.ofNullable(switch (type) {
                case Subjects.PLACEMENTS_BOUND -> {
                    EventEnvelope<PlacementBound> bound = EventCodec.decode(event, PlacementBound.class);
                    yield report(bound, bound.payload().jobId(), PlacementReport.BOUND, null, job -> {
                        queueWait.record(Duration.between(job.submittedAt(), bound.payload().boundAt()).abs());
                        job.startAttempt(attempt -> JobPlacement.of(attempt, bound.payload()).toJson());
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
                    yield report(migrated, m.jobId(), abandoned ? PlacementReport.MIGRATION_ABANDONED : PlacementReport.MIGRATED,
                            m.describe(), !PlacementMigrated.MOVED.equals(m.phase()) ? null
                                    : job -> job.startAttempt(attempt -> JobPlacement.moved(attempt, m).toJson()));
                }
                case Subjects.PLACEMENTS_PENDING -> {
                    EventEnvelope<PlacementPending> pending = EventCodec.decode(event, PlacementPending.class);
                    yield report(pending, pending.payload().jobId(), PlacementReport.PENDING, pending.payload().reason(), null);
                }
                default -> null;
            });
        } catch (MalformedEventException e) {
            return Optional.empty();
        }
    }

    /** Gangs' events, and events that do not decode or are of no interest here. */
    private Uni<Void> onOtherEvent(JsonNode event) {
        String type = event.path("type").asText("");
        try {
            return switch (type) {
                case Subjects.PLACEMENTS_GANG_FORMED -> processed.applyOnce(EventCodec.decode(event, PodGangFormed.class),
                        formed -> podGangs.formed(formed.payload()));
                case Subjects.PLACEMENTS_GANG_DISSOLVED -> processed.applyOnce(EventCodec.decode(event, PodGangDissolved.class),
                        dissolved -> podGangs.dissolved(dissolved.payload()));
                default -> {
                    // a job report lands here only when it did not decode
                    reportTypes(type).ifPresent(t -> EventCodec.decode(event, t));
                    yield Uni.createFrom().voidItem();
                }
            };
        } catch (MalformedEventException e) {
            outcome("malformed");
            LOG.errorf("dropping malformed %s event: %s", type, e.getMessage());
            return Uni.createFrom().voidItem();
        }
    }

    private static Optional<Class<?>> reportTypes(String type) {
        return Optional.ofNullable(switch (type) {
            case Subjects.PLACEMENTS_BOUND -> PlacementBound.class;
            case Subjects.PLACEMENTS_PREEMPTED, Subjects.PLACEMENTS_REQUEUED, Subjects.PLACEMENTS_FAILED,
                    Subjects.PLACEMENTS_COMPLETED -> PlacementReleased.class;
            case Subjects.PLACEMENTS_MIGRATED -> PlacementMigrated.class;
            case Subjects.PLACEMENTS_PENDING -> PlacementPending.class;
            default -> null;
        });
    }

    private JobProgressStore.Report released(JsonNode event, PlacementReport report, Function<String, String> reasonShown) {
        EventEnvelope<PlacementReleased> released = EventCodec.decode(event, PlacementReleased.class);
        Integer exitCode = released.payload().exitCode();
        // the placement stays as the record of where the job ran; an exit code, when reported, says how it ended
        return report(released, released.payload().jobId(), report, reasonShown.apply(released.payload().reason()),
                exitCode == null ? null : job -> job.ended(exitCode));
    }

    private static JobProgressStore.Report report(EventEnvelope<?> envelope, UUID jobId, PlacementReport report, String reason,
            Consumer<JobProgress> onApplied) {
        return new JobProgressStore.Report(envelope.eventId(), envelope.type(), jobId, envelope.sequence(), report, reason, onApplied);
    }

    /**
     * Applies reports once (inbox by event id, in the transaction of the change) and in placement's
     * order (by its sequence, see {@link PlacementReport}); a stale report is recorded and changes nothing.
     */
    private Uni<Void> applyReports(List<JobProgressStore.Report> run) {
        if (run.isEmpty()) {
            return Uni.createFrom().voidItem();
        }
        return store.applyAll(run).invoke(results -> results.forEach(this::count)).replaceWithVoid();
    }

    private void count(JobProgressStore.Applied applied) {
        switch (applied.result()) {
            case APPLIED -> outcome("applied");
            case DUPLICATE -> outcome("duplicate");
            case UNKNOWN_JOB -> outcome("unknown-job");
            case STALE -> {
                outcome("stale");
                LOG.infof("%s for job %s ignored: the job is %s (report %d, last applied %d)", applied.report().type(),
                        applied.report().jobId(), applied.job().state(), applied.report().sequence(), applied.job().placementSequence());
            }
        }
    }

    private void outcome(String outcome) {
        registry.counter("gantry.events.consumed", "stream", Subjects.PLACEMENTS_STREAM, "outcome", outcome).increment();
    }
}
