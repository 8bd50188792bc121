package dev.gantry.placement.window;

import dev.gantry.placement.persistence.RunningJobRecord;
import java.time.Duration;
import java.time.Instant;

/**
 * Stopping a running job with grace, the one way for every executor: the job's running row gets a
 * deadline ({@code evicting_until}) and a reason. From then on its node agents see its tasks marked
 * {@code stop} with the grace left ({@code GET /v1/agent/assignments}) and send them SIGTERM, then
 * SIGKILL when the grace is over; its pods are deleted at the deadline. The job goes back in line
 * (QUEUED, with its submission time) when every agent-run task has exited ({@code AgentReports}) or
 * at the deadline ({@code Reconciler.finishEvictions}), whichever comes first; placed again, its
 * tasks find their {@code GANTRY_CHECKPOINT_DIR}. Preemption uses it; so may any other reason to move
 * a job (defragmentation), inside a transaction that holds the row.
 */
public final class GracefulStop {

    private GracefulStop() {
    }

    /** Marks a (managed) running row to stop with {@code grace}; a row already stopping keeps its earlier deadline. */
    public static void begin(RunningJobRecord job, Instant now, Duration grace, String reason) {
        if (job.evictingUntil != null) {
            return;
        }
        job.evictingUntil = now.plus(grace);
        job.evictReason = reason;
    }
}
