package dev.gantry.admission.rest;

import dev.gantry.admission.forecast.StartTimes;
import dev.gantry.admission.domain.JobPlacement;
import dev.gantry.admission.domain.JobState;
import dev.gantry.admission.persistence.JobEntity;
import java.time.Instant;
import java.util.List;
import java.util.UUID;

/**
 * A job as the API shows it, with where and how it ran: {@code attempts} (how many times it was
 * placed), {@code placement} (the last one: held while PLACED or RUNNING, kept as history after;
 * null when never placed) and {@code exitCode} (what its processes exited with, when reported).
 * For a FAILED job {@code pendingReason} is why it failed. A waiting job (QUEUED, PREEMPTED) read
 * through {@code GET /v1/jobs} or {@code GET /v1/jobs/{id}} has {@code estimatedStartAt} (null when
 * unknown) and {@code startForecast}, what it rests on (placement's last window); other jobs, and
 * the views of a submission, a cancel or the event stream, have neither.
 */
public record JobView(UUID id, String name, String queue, String team, String owner, String priorityClass, int priority,
        int totalGpus, JobState state, String pendingReason, Instant submittedAt, Instant updatedAt, int attempts,
        Placement placement, Integer exitCode, Instant estimatedStartAt, StartForecast startForecast) {

    /**
     * What an expected start rests on: {@code basis} {@code reservation} (the head of the line, GPUs
     * reserved), {@code releases} (the jobs it waits for end by their estimates), {@code now} (it fits:
     * the next window places it) or {@code unknown}; {@code waitsFor}: the jobs that must end first;
     * {@code note}: the same in words.
     */
    public record StartForecast(String basis, List<UUID> waitsFor, String note) {
    }

    /** One placement: its attempt, when it was bound, the nodes and GPUs in short ({@link JobPlacement#nodeList()}), each task. */
    public record Placement(int attempt, Instant boundAt, String nodeList, List<JobPlacement.Task> tasks) {
        static Placement of(JobPlacement placement) {
            return placement == null ? null
                    : new Placement(placement.attempt(), placement.boundAt(), placement.nodeList(), placement.tasks());
        }
    }

    static JobView of(JobEntity job) {
        return of(job, null);
    }

    /** With the job's start-time forecast ({@code forecast} null: none). */
    static JobView of(JobEntity job, StartTimes.Forecast forecast) {
        return new JobView(job.id, job.name, job.queue, job.team, job.owner, job.priorityClass, job.priority, job.totalGpus,
                job.state, job.pendingReason, job.submittedAt, job.updatedAt, job.attempts,
                Placement.of(JobPlacement.fromJson(job.placement)), job.exitCode, forecast == null ? null : forecast.at(),
                forecast == null ? null : new StartForecast(forecast.basis(), forecast.waitsFor(), forecast.note()));
    }
}
