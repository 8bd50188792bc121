package dev.gantry.admission.quota;

import dev.gantry.admission.domain.Caller;
import dev.gantry.admission.domain.JobSpec;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.UUID;
import org.eclipse.microprofile.config.inject.ConfigProperty;

/**
 * Asks quota-service before a job is stored; admission never stores a job quota has not seen. The
 * job's id goes with the check: quota then reserves the job's place among its user's pending jobs, so
 * concurrent submissions cannot all pass the limit, and a retried check is not counted against itself.
 * Concurrent checks go to quota together ({@link CoalescedChecks}); the retry, timeout and circuit
 * breaker are on each exchange with quota ({@link QuotaCalls}).
 */
@ApplicationScoped
public class AdmissionCheck {

    private final CoalescedChecks quota;
    private final boolean enabled;

    public AdmissionCheck(QuotaCalls calls,
            @ConfigProperty(name = "gantry.admission.quota-check.enabled", defaultValue = "true") boolean enabled) {
        this.quota = new CoalescedChecks(calls);
        this.enabled = enabled;
    }

    public Uni<QuotaClient.CheckResult> check(JobSpec spec, Caller caller, UUID jobId) {
        if (!enabled) {
            return Uni.createFrom().item(new QuotaClient.CheckResult(true, null, "quota check disabled by configuration", null));
        }
        String gpuModel = spec.gpuModels().size() == 1 ? spec.gpuModels().getFirst() : null;
        return quota.check(new QuotaClient.CheckRequest(caller.user(), spec.team(), caller.teams(), spec.queue(),
                new QuotaClient.Resources(spec.totalGpus(), gpuModel, spec.totalCpuMillis(), spec.totalMemoryMiB()),
                spec.priorityClass(), spec.priority() == 0 ? null : spec.priority(), spec.migratable(), jobId));
    }
}
