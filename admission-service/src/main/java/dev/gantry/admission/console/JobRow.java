package dev.gantry.admission.console;

import dev.gantry.admission.forecast.StartTimes;
import dev.gantry.admission.domain.JobPlacement;
import dev.gantry.admission.domain.JobState;
import dev.gantry.admission.persistence.JobEntity;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;

/**
 * One line of the jobs page: state, wait, where it runs or ran, why it waits or how it ended. Where:
 * the job's own last placement (what {@code GET /v1/jobs/{id}} shows), and placement-service's
 * allocations only for a job placed by a placement service that did not yet say which GPUs.
 */
public record JobRow(UUID id, String name, String queue, String team, String owner, String state, int totalGpus, String waited,
        String placement, String pendingReason, boolean cancellable, Instant submittedAt, String expectedStart) {

    public static JobRow of(JobEntity job, List<PlacementClient.Allocation> allocations, Instant now) {
        return of(job, allocations, null, now);
    }

    /** {@code forecast}: a waiting job's expected start (null: none), shown as {@code squeue --start} would. */
    public static JobRow of(JobEntity job, List<PlacementClient.Allocation> allocations, StartTimes.Forecast forecast, Instant now) {
        JobPlacement stored = JobPlacement.fromJson(job.placement);
        boolean waiting = job.state == JobState.QUEUED || job.state == JobState.PREEMPTED;
        Instant placedAt = stored != null && stored.boundAt() != null ? stored.boundAt()
                : allocations.stream().map(PlacementClient.Allocation::allocatedAt).filter(java.util.Objects::nonNull)
                        .min(Comparator.naturalOrder()).orElse(null);
        String waited;
        if (waiting) {
            waited = "waiting " + duration(Duration.between(job.submittedAt, now));
        } else if (placedAt != null) {
            waited = "waited " + duration(Duration.between(job.submittedAt, placedAt));
        } else {
            waited = "–";
        }
        String reason;
        if (waiting) {
            reason = job.pendingReason;
            if ((reason == null || reason.isBlank()) && job.state == JobState.QUEUED) {
                reason = "waiting for the next scheduling window";
            }
        } else {
            reason = outcome(job);
        }
        return new JobRow(job.id, job.name, job.queue, job.team, job.owner, job.state.name(), job.totalGpus, waited,
                waiting ? "" : where(job, stored, allocations), reason,
                job.state.canBecome(JobState.CANCELLED), job.submittedAt, waiting ? expectedStart(forecast, now) : "");
    }

    /** "in 16 min 40 s (reserved: after 1 job ends)", "now (fits now)", or "unknown: why"; "" without a forecast. */
    static String expectedStart(StartTimes.Forecast forecast, Instant now) {
        if (forecast == null) {
            return "";
        }
        if (forecast.at() == null) {
            return forecast.note();
        }
        Duration in = Duration.between(now, forecast.at());
        String when = in.getSeconds() <= 0 ? "now" : "in " + duration(in);
        return when + " (" + forecast.note() + ")";
    }

    /** Where a job that is not waiting runs ("dgx-01: GPU 1, 2"), or ran ("ran on ..."), with its attempt after the first. */
    private static String where(JobEntity job, JobPlacement stored, List<PlacementClient.Allocation> allocations) {
        String text;
        if (stored != null && !stored.tasks().isEmpty()) {
            text = placement(stored.tasks().stream()
                    .map(t -> new PlacementClient.Allocation(job.id, t.task(), t.node(), t.gpus(), t.gpuMilli(), stored.boundAt()))
                    .toList());
        } else {
            text = placement(allocations);
        }
        if (text.isEmpty()) {
            return "";
        }
        if (job.state.isFinal()) {
            text = "ran on " + text;
        }
        return job.attempts > 1 ? text + " (attempt " + job.attempts + ")" : text;
    }

    /** How an ended job ended: its exit code when reported, and its reason (a failed job's says why). */
    private static String outcome(JobEntity job) {
        String reason = job.pendingReason == null || job.pendingReason.isBlank() ? null : job.pendingReason;
        if (job.exitCode == null) {
            return reason == null ? "" : reason;
        }
        return "exit code " + job.exitCode + (reason == null ? "" : ": " + reason);
    }

    /** "dgx-01: GPU 1, 2 · dgx-02: GPU 0 (500m)"; empty when it holds none. */
    static String placement(List<PlacementClient.Allocation> allocations) {
        Map<String, Map<Integer, String>> byNode = new TreeMap<>();
        for (PlacementClient.Allocation a : allocations) {
            Map<Integer, String> gpus = byNode.computeIfAbsent(a.node(), n -> new TreeMap<>());
            for (int g : a.gpus() == null ? List.<Integer>of() : a.gpus()) {
                gpus.put(g, g + (a.gpuMilli() != null && a.gpuMilli() < 1000 ? " (" + a.gpuMilli() + "m)" : ""));
            }
        }
        List<String> parts = new ArrayList<>();
        byNode.forEach((node, gpus) -> parts.add(gpus.isEmpty() ? node : node + ": GPU " + String.join(", ", gpus.values())));
        return String.join(" · ", parts);
    }

    static String duration(Duration d) {
        long s = Math.max(0, d.getSeconds());
        if (s < 60) {
            return s + " s";
        }
        if (s < 3600) {
            return s / 60 + " min " + s % 60 + " s";
        }
        if (s < 86400) {
            return s / 3600 + " h " + s % 3600 / 60 + " min";
        }
        return s / 86400 + " d " + s % 86400 / 3600 + " h";
    }
}
