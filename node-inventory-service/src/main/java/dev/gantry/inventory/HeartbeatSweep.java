package dev.gantry.inventory;

import io.quarkus.scheduler.Scheduled;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.jboss.logging.Logger;

/** Agent nodes whose last heartbeat is older than {@code gantry.inventory.heartbeat.timeout} turn NotReady. */
@ApplicationScoped
public class HeartbeatSweep {

    private static final Logger LOG = Logger.getLogger(HeartbeatSweep.class);

    private final NodeRegistry registry;
    private final Duration timeout;

    public HeartbeatSweep(NodeRegistry registry, @ConfigProperty(name = "gantry.inventory.heartbeat.timeout") Duration timeout) {
        this.registry = registry;
        this.timeout = timeout;
    }

    @Scheduled(every = "${gantry.inventory.heartbeat.sweep-every}", concurrentExecution = Scheduled.ConcurrentExecution.SKIP,
            skipExecutionIf = Scheduled.ApplicationNotRunning.class)
    Uni<Void> scheduled() {
        return sweep(Instant.now()).replaceWithVoid();
    }

    /** Marks the stale agent nodes NotReady as of {@code now}; returns their names. */
    public Uni<List<String>> sweep(Instant now) {
        return registry.markStale(now, timeout).invoke(stale -> {
            if (!stale.isEmpty()) {
                LOG.warnf("no heartbeat for %s from %s: now NotReady", timeout, stale);
            }
        });
    }
}
