package dev.gantry.admission.console;

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

/** One line of the jobs page: state, wait, the GPUs it holds, why it waits. */
public record JobRow(UUID id, String name, String queue, String team, String owner, String state, int totalGpus, String waited,
        String placement, String pendingReason, boolean cancellable, Instant submittedAt) {

    public static JobRow of(JobEntity job, List<PlacementClient.Allocation> allocations, Instant now) {
        Instant placedAt = allocations.stream().map(PlacementClient.Allocation::allocatedAt).filter(java.util.Objects::nonNull)
                .min(Comparator.naturalOrder()).orElse(null);
        String waited;
        if (job.state == JobState.QUEUED || job.state == JobState.PREEMPTED) {
            waited = "waiting " + duration(Duration.between(job.submittedAt, now));
        } else if (placedAt != null) {
            waited = "waited " + duration(Duration.between(job.submittedAt, placedAt));
        } else {
            waited = "–";
        }
        String reason = job.pendingReason;
        if ((reason == null || reason.isBlank()) && job.state == JobState.QUEUED) {
            reason = "waiting for the next scheduling window";
        }
        return new JobRow(job.id, job.name, job.queue, job.team, job.owner, job.state.name(), job.totalGpus, waited,
                placement(allocations), job.state == JobState.QUEUED || job.state == JobState.PREEMPTED ? reason : "",
                job.state.canBecome(JobState.CANCELLED), job.submittedAt);
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
        byNode.forEach((node, gpus) -> parts.add(node + ": GPU " + String.join(", ", gpus.values())));
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
