package dev.gantry.admission.persistence;

import dev.gantry.kit.retention.Retention;
import io.quarkus.scheduler.Scheduled;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Duration;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.jboss.logging.Logger;

/**
 * Idempotency keys are remembered for {@code gantry.admission.idempotency-key-retention} (7 days):
 * a retry within that time returns the first job; after it the key may be used again.
 */
@ApplicationScoped
public class IdempotencyKeyRetention {

    private static final Logger LOG = Logger.getLogger(IdempotencyKeyRetention.class);

    private final Duration retention;

    public IdempotencyKeyRetention(
            @ConfigProperty(name = "gantry.admission.idempotency-key-retention", defaultValue = "7d") Duration retention) {
        this.retention = retention;
    }

    @Scheduled(every = "${gantry.retention.interval:1h}", delayed = "1m", concurrentExecution = Scheduled.ConcurrentExecution.SKIP,
            skipExecutionIf = Scheduled.ApplicationNotRunning.class)
    Uni<Void> scheduled() {
        return prune().onFailure().recoverWithItem(e -> {
            LOG.warnf("pruning idempotency keys failed (next pass retries): %s", e.toString());
            return 0L;
        }).replaceWithVoid();
    }

    /** One pass; the item is how many keys went. */
    public Uni<Long> prune() {
        return Retention.sliced("delete from idempotency_key where (owner, key) in (select owner, key from idempotency_key"
                + " where created_at < now() - make_interval(secs => ?1) limit 5000)", retention);
    }
}
