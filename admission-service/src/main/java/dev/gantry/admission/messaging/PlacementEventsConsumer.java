package dev.gantry.admission.messaging;

import com.fasterxml.jackson.databind.JsonNode;
import dev.gantry.admission.domain.JobState;
import dev.gantry.admission.persistence.JobEntity;
import dev.gantry.contracts.events.EventCodec;
import dev.gantry.contracts.events.EventEnvelope;
import dev.gantry.contracts.events.MalformedEventException;
import dev.gantry.contracts.events.Subjects;
import dev.gantry.contracts.placements.PlacementBound;
import dev.gantry.contracts.placements.PlacementPending;
import dev.gantry.contracts.placements.PlacementReleased;
import dev.gantry.kit.inbox.ProcessedEvents;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.quarkus.hibernate.reactive.panache.Panache;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Duration;
import java.time.Instant;
import java.util.UUID;
import org.eclipse.microprofile.reactive.messaging.Incoming;
import org.jboss.logging.Logger;

/**
 * Moves jobs through their lifecycle as placement reports on {@code placements.*}: bound gangs are
 * PLACED, preempted ones go back to QUEUED with their original submission time, completed ones
 * SUCCEED, failed ones FAIL; a queued job's pending reason is what the last window said of it.
 * Each event is applied once (inbox by event id, in the transaction of the change); an event that
 * a job's state no longer allows (a bound report for a job cancelled meanwhile) is recorded and skipped.
 */
@ApplicationScoped
public class PlacementEventsConsumer {

    private static final Logger LOG = Logger.getLogger(PlacementEventsConsumer.class);

    private final ProcessedEvents processed;
    private final MeterRegistry registry;
    private final Timer queueWait;

    public PlacementEventsConsumer(ProcessedEvents processed, MeterRegistry registry) {
        this.processed = processed;
        this.registry = registry;
        this.queueWait = Timer.builder("gantry.admission.queue.wait")
                .description("time from submission to placement")
                .publishPercentileHistogram()
                .minimumExpectedValue(Duration.ofSeconds(1))
                .maximumExpectedValue(Duration.ofDays(7))
                .register(registry);
    }

    @Incoming("placements-in")
    public Uni<Void> onPlacementEvent(JsonNode event) {
        String type = event.path("type").asText("");
        try {
            return switch (type) {
                case Subjects.PLACEMENTS_BOUND -> {
                    EventEnvelope<PlacementBound> bound = EventCodec.decode(event, PlacementBound.class);
                    yield applyOnce(bound.eventId(), type, bound.payload().jobId(), job -> placed(job, bound.payload()));
                }
                case Subjects.PLACEMENTS_PREEMPTED -> {
                    EventEnvelope<PlacementReleased> released = EventCodec.decode(event, PlacementReleased.class);
                    yield applyOnce(released.eventId(), type, released.payload().jobId(), job -> requeued(job, released.payload()));
                }
                case Subjects.PLACEMENTS_REQUEUED -> {
                    // back in line through no fault of its own (node lost, launch failed for now): like a preemption
                    EventEnvelope<PlacementReleased> released = EventCodec.decode(event, PlacementReleased.class);
                    yield applyOnce(released.eventId(), type, released.payload().jobId(), job -> requeued(job, released.payload()));
                }
                case Subjects.PLACEMENTS_FAILED -> {
                    EventEnvelope<PlacementReleased> released = EventCodec.decode(event, PlacementReleased.class);
                    yield applyOnce(released.eventId(), type, released.payload().jobId(), job -> failed(job, released.payload()));
                }
                case Subjects.PLACEMENTS_COMPLETED -> {
                    EventEnvelope<PlacementReleased> released = EventCodec.decode(event, PlacementReleased.class);
                    yield applyOnce(released.eventId(), type, released.payload().jobId(), PlacementEventsConsumer::succeeded);
                }
                case Subjects.PLACEMENTS_PENDING -> {
                    EventEnvelope<PlacementPending> pending = EventCodec.decode(event, PlacementPending.class);
                    yield applyOnce(pending.eventId(), type, pending.payload().jobId(), job -> waiting(job, pending.payload()));
                }
                default -> Uni.createFrom().voidItem();
            };
        } catch (MalformedEventException e) {
            outcome("malformed");
            LOG.errorf("dropping malformed %s event: %s", type, e.getMessage());
            return Uni.createFrom().voidItem();
        }
    }

    private Uni<Void> applyOnce(UUID eventId, String type, UUID jobId, java.util.function.Function<JobEntity, Boolean> change) {
        return Panache.withTransaction(() -> processed.markFirstSeen(eventId, type).chain(first -> {
            if (!first) {
                outcome("duplicate");
                return Uni.createFrom().voidItem();
            }
            return JobEntity.<JobEntity>findById(jobId).map(job -> {
                if (job == null) {
                    outcome("unknown-job");
                } else if (change.apply(job)) {
                    job.updatedAt = Instant.now();
                    outcome("applied");
                } else {
                    outcome("stale");
                    LOG.infof("%s for job %s ignored: the job is %s", type, jobId, job.state);
                }
                return null;
            });
        }));
    }

    private boolean placed(JobEntity job, PlacementBound bound) {
        if (!job.state.canBecome(JobState.PLACED)) {
            return false;
        }
        job.state = JobState.PLACED;
        job.pendingReason = null;
        queueWait.record(Duration.between(job.submittedAt, bound.boundAt()).abs());
        return true;
    }

    /** PREEMPTED, then straight back to QUEUED: the submission time stays, so the job keeps its place in line. */
    private static boolean requeued(JobEntity job, PlacementReleased released) {
        if (!job.state.canBecome(JobState.PREEMPTED)) {
            return false;
        }
        // PREEMPTED is passed through at once: nothing waits in it, the job is back in line
        job.state = JobState.QUEUED;
        job.pendingReason = "preempted: " + released.reason() + "; waiting to be placed again";
        return true;
    }

    /** A placed job that completes has run: PLACED passes through RUNNING to SUCCEEDED. */
    private static boolean succeeded(JobEntity job) {
        if (job.state == JobState.PLACED) {
            job.state = JobState.RUNNING;
        }
        if (!job.state.canBecome(JobState.SUCCEEDED)) {
            return false;
        }
        job.state = JobState.SUCCEEDED;
        job.pendingReason = null;
        return true;
    }

    /** Only a job still waiting takes a reason: a late report for a job placed or cancelled meanwhile is stale. */
    private static boolean waiting(JobEntity job, PlacementPending pending) {
        if (job.state != JobState.QUEUED) {
            return false;
        }
        job.pendingReason = pending.reason();
        return true;
    }

    private static boolean failed(JobEntity job, PlacementReleased released) {
        if (!job.state.canBecome(JobState.FAILED)) {
            return false;
        }
        job.state = JobState.FAILED;
        job.pendingReason = released.reason();
        return true;
    }

    private void outcome(String outcome) {
        registry.counter("gantry.events.consumed", "stream", Subjects.PLACEMENTS_STREAM, "outcome", outcome).increment();
    }
}
