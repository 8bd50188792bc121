package dev.gantry.placement.engine.packing;

import dev.gantry.placement.engine.domain.PendingJob;
import dev.gantry.placement.engine.domain.TaskGroup;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;

/**
 * The pod shapes that have arrived lately, counted as they arrive: the workload a
 * {@link FragmentationGauge} keeps room for. A window only sees what runs and what waits, and
 * the shapes that fail to fit are exactly the ones that stop running and waiting, so a gauge
 * built from the window alone forgets the pods it most needs to keep room for; the arrivals
 * remember them. Counts are halved whenever they pass {@code horizon} pods, so the mix follows
 * a workload that changes. Thread-safe: the service records arrivals while a window plans.
 */
public final class WorkloadMix {

    /** Pods remembered before the counts are halved. */
    public static final int DEFAULT_HORIZON = 20_000;

    private final int horizon;
    private final Map<FragmentationGauge.Key, Double> counts = new HashMap<>();
    private double total;

    public WorkloadMix() {
        this(DEFAULT_HORIZON);
    }

    public WorkloadMix(int horizon) {
        if (horizon < 2) {
            throw new IllegalArgumentException("horizon must be at least 2 pods, got " + horizon);
        }
        this.horizon = horizon;
    }

    /** Counts the job's pods (every replica of every task group) as arrived. */
    public synchronized void record(PendingJob job) {
        Set<String> models = Set.copyOf(job.gpuModels());
        for (TaskGroup g : job.taskGroups()) {
            if (g.migProfile() != null) {
                continue; // MIG pods use MIG devices only: no shape of the gauge (see FragmentationGauge)
            }
            counts.merge(FragmentationGauge.Key.of(g, models), (double) g.replicas(), Double::sum);
            total += g.replicas();
        }
        if (total > horizon) {
            counts.replaceAll((k, v) -> v / 2);
            counts.values().removeIf(v -> v < 0.5); // a shape seen once, long ago, no longer counts
            total = counts.values().stream().mapToDouble(Double::doubleValue).sum();
        }
    }

    /** Pods counted (after halving). */
    public synchronized double total() {
        return total;
    }

    synchronized Map<FragmentationGauge.Key, Double> counts() {
        return Map.copyOf(counts);
    }
}
