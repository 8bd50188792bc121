package dev.gantry.admission.quota;

import dev.gantry.admission.domain.Caller;
import dev.gantry.admission.domain.JobSpec;
import io.smallrye.faulttolerance.api.CircuitBreakerName;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.temporal.ChronoUnit;
import java.util.UUID;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.eclipse.microprofile.faulttolerance.CircuitBreaker;
import org.eclipse.microprofile.faulttolerance.Retry;
import org.eclipse.microprofile.faulttolerance.Timeout;
import org.eclipse.microprofile.rest.client.inject.RestClient;

/**
 * Asks quota-service before a job is stored. A slow or failing quota-service (timeout, 5xx, no
 * connection) is retried briefly, then the circuit opens and submissions fail fast with 503 until it
 * recovers: admission never stores a job quota has not seen. A 4xx is quota refusing this one
 * request: it is not retried and does not count towards opening the circuit, so one user's bad
 * requests never shut out the others. The job's id goes with the check: quota then reserves the
 * job's place among its user's pending jobs, so concurrent submissions cannot all pass the limit, and
 * a retried check is not counted against itself.
 */
@ApplicationScoped
public class AdmissionCheck {

    private final QuotaClient quota;
    private final boolean enabled;

    public AdmissionCheck(@RestClient QuotaClient quota,
            @ConfigProperty(name = "gantry.admission.quota-check.enabled", defaultValue = "true") boolean enabled) {
        this.quota = quota;
        this.enabled = enabled;
    }

    // Sized for a burst on a loaded machine: 40 concurrent submitters made checks take over 2 s while
    // quota was up, and a 10-request window opened on that (600+ of 2,000 submissions got 503). A
    // check is given 5 s, and the circuit opens when half of the last 40 attempts failed.
    @Timeout(value = 5, unit = ChronoUnit.SECONDS)
    @Retry(maxRetries = 2, delay = 100, jitter = 50, abortOn = QuotaRefusedRequestException.class)
    @CircuitBreaker(requestVolumeThreshold = 40, failureRatio = 0.5, delay = 10, delayUnit = ChronoUnit.SECONDS,
            skipOn = QuotaRefusedRequestException.class)
    @CircuitBreakerName("quota-admission-check")
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
