package dev.gantry.admission.quota;

import io.smallrye.faulttolerance.api.CircuitBreakerName;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.temporal.ChronoUnit;
import java.util.List;
import org.eclipse.microprofile.faulttolerance.CircuitBreaker;
import org.eclipse.microprofile.faulttolerance.Retry;
import org.eclipse.microprofile.faulttolerance.Timeout;
import org.eclipse.microprofile.rest.client.inject.RestClient;

/**
 * One exchange with quota's admission check: a check alone, or a batch. A slow or failing quota-service
 * (timeout, 5xx, no connection) is retried briefly, then the circuit opens and checks fail fast until it
 * recovers. A 4xx is quota refusing the request: not retried, not counted towards opening the circuit,
 * so one user's bad request never shuts out the others (a check quota finds malformed inside a batch is
 * answered 400 in its place and fails alone, in {@link CoalescedChecks}).
 */
@ApplicationScoped
public class QuotaCalls implements CoalescedChecks.Quota {

    private final QuotaClient quota;

    public QuotaCalls(@RestClient QuotaClient quota) {
        this.quota = quota;
    }

    // Sized for a burst on a loaded machine: 40 concurrent submitters made checks take over 2 s while
    // quota was up, and a 10-request window opened on that. An exchange is given 5 s, and the circuit
    // opens when half of the last 40 exchanges failed. The time a check waits for the exchange before
    // its own is not in these 5 s: a batch is timed, not the wait behind it.
    @Override
    @Timeout(value = 5, unit = ChronoUnit.SECONDS)
    @Retry(maxRetries = 2, delay = 100, jitter = 50, abortOn = QuotaRefusedRequestException.class)
    @CircuitBreaker(requestVolumeThreshold = 40, failureRatio = 0.5, delay = 10, delayUnit = ChronoUnit.SECONDS,
            skipOn = QuotaRefusedRequestException.class)
    @CircuitBreakerName("quota-admission-check")
    public Uni<QuotaClient.BatchResult> send(List<QuotaClient.CheckRequest> checks) {
        if (checks.size() == 1) {
            return quota.check(checks.getFirst())
                    .map(result -> new QuotaClient.BatchResult(List.of(new QuotaClient.BatchAnswer(200, result, null))));
        }
        return quota.checkAll(new QuotaClient.Batch(checks));
    }
}
