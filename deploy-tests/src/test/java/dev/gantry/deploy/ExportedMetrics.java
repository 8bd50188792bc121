package dev.gantry.deploy;

import java.util.Set;
import java.util.TreeSet;

/**
 * The one list of Prometheus series the services export and the alerts and dashboard may use.
 * e2e-tests' AlertMetricsIT checks the gantry_* names of the alerts against the running services'
 * /q/metrics, so this list cannot drift from the code unnoticed; add a name here only together
 * with the meter that exports it.
 */
final class ExportedMetrics {

    /** Timers and histograms: Micrometer exports _count, _sum, _max (and _bucket with a histogram). */
    private static final Set<String> TIMERS = Set.of(
            "gantry_placement_window_seconds",
            "gantry_placement_solve_seconds",
            "gantry_placement_window_phase_seconds",
            "gantry_placement_queue_wait_seconds");

    /** Counters (named with their _total) and gauges, exported under exactly these names. */
    private static final Set<String> PLAIN = Set.of(
            // placement-service
            "gantry_placement_window_overruns_total",
            "gantry_placement_window_limit_seconds",
            "gantry_placement_plans_rejected_total",
            "gantry_placement_solver_fallbacks_total",
            "gantry_placement_jobs_placed_total",
            "gantry_placement_jobs_preempted_total",
            "gantry_placement_jobs_migrated_total",
            "gantry_placement_score",
            "gantry_placement_gpus_allocated",
            "gantry_placement_gpu_allocated",
            "gantry_placement_stranded_gpus",
            "gantry_placement_whole_free_nodes",
            "gantry_placement_pending_jobs",
            "gantry_placement_oldest_pending_seconds",
            "gantry_placement_quarantined_nodes",
            "gantry_placement_fenced_writes_total",
            // admission-service (JobStateGauges)
            "gantry_admission_jobs",
            // every service (ProcessedEvents)
            "gantry_events_consumed_total",
            // every service (OutboxRelay)
            "gantry_outbox_dead_letters",
            "gantry_outbox_backlog_age_seconds",
            "gantry_outbox_publish_failures_total",
            "gantry_consumer_pending_messages",
            "gantry_consumer_ack_pending_messages");

    /** Series from other exporters that the alerts join with: NVIDIA dcgm-exporter's GPU utilisation. */
    static final Set<String> EXTERNAL = Set.of("DCGM_FI_DEV_GPU_UTIL");

    private ExportedMetrics() {
    }

    /** Every series name a query may use. */
    static Set<String> all() {
        Set<String> names = new TreeSet<>(PLAIN);
        for (String timer : TIMERS) {
            for (String suffix : new String[] {"_count", "_sum", "_max", "_bucket"}) {
                names.add(timer + suffix);
            }
        }
        names.addAll(EXTERNAL);
        return names;
    }
}
