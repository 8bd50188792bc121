package dev.gantry.placement.kubernetes;

import dev.gantry.placement.cluster.Leadership;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.extended.leaderelection.LeaderCallbacks;
import io.fabric8.kubernetes.client.extended.leaderelection.LeaderElectionConfig;
import io.fabric8.kubernetes.client.extended.leaderelection.LeaderElectionConfigBuilder;
import io.fabric8.kubernetes.client.extended.leaderelection.resourcelock.LeaseLock;
import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.runtime.StartupEvent;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.enterprise.inject.Instance;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.Executors;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.jboss.logging.Logger;

/**
 * {@code gantry.placement.leader-election.enabled}: replicas compete for a
 * {@code coordination.k8s.io} Lease (fabric8's leader elector); the holder leads
 * ({@link Leadership#leading()}) and is the only one that plans, binds and evicts. A replica that
 * loses the Lease stops at once and stands for election again.
 */
@ApplicationScoped
public class LeaderElection {

    private static final Logger LOG = Logger.getLogger(LeaderElection.class);

    private final Leadership leadership;
    private final Instance<KubernetesClient> client;
    private final String namespace;
    private final String leaseName;
    private final String identity;
    private final Duration leaseDuration;
    private final Duration renewDeadline;
    private final Duration retryPeriod;
    private final ScheduledExecutorService executor = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "gantry-leader-election");
        t.setDaemon(true);
        return t;
    });
    private volatile boolean stopping;
    private volatile CompletableFuture<?> running;

    public LeaderElection(Leadership leadership, Instance<KubernetesClient> client,
            @ConfigProperty(name = "gantry.placement.kubernetes.namespace", defaultValue = "gantry") String namespace,
            @ConfigProperty(name = "gantry.placement.leader-election.lease-name", defaultValue = "placement-service-leader") String leaseName,
            @ConfigProperty(name = "gantry.placement.leader-election.identity", defaultValue = " ") String identity,
            @ConfigProperty(name = "gantry.placement.leader-election.lease-duration", defaultValue = "15s") Duration leaseDuration,
            @ConfigProperty(name = "gantry.placement.leader-election.renew-deadline", defaultValue = "10s") Duration renewDeadline,
            @ConfigProperty(name = "gantry.placement.leader-election.retry-period", defaultValue = "2s") Duration retryPeriod) {
        this.leadership = leadership;
        this.client = client;
        this.namespace = namespace;
        this.leaseName = leaseName;
        // two replicas on one host (or a reused pod name) must never share an identity
        String base = !identity.isBlank() ? identity.trim() : System.getenv().getOrDefault("HOSTNAME", "placement");
        this.identity = base + "-" + UUID.randomUUID().toString().substring(0, 8);
        this.leaseDuration = leaseDuration;
        this.renewDeadline = renewDeadline;
        this.retryPeriod = retryPeriod;
    }

    void start(@Observes StartupEvent event) {
        if (!leadership.electionEnabled()) {
            return;
        }
        LOG.infof("standing for leader of Lease %s/%s as %s", namespace, leaseName, identity);
        stand();
    }

    private void stand() {
        LeaderElectionConfig config = new LeaderElectionConfigBuilder()
                .withName("placement-service")
                .withLock(new LeaseLock(namespace, leaseName, identity))
                .withLeaseDuration(leaseDuration)
                .withRenewDeadline(renewDeadline)
                .withRetryPeriod(retryPeriod)
                .withReleaseOnCancel(true)
                .withLeaderCallbacks(new LeaderCallbacks(
                        () -> {
                            LOG.infof("%s leads: binding and evicting", identity);
                            leadership.set(true);
                        },
                        () -> {
                            LOG.infof("%s no longer leads", identity);
                            leadership.set(false);
                        },
                        leader -> LOG.infof("leader is %s", leader)))
                .build();
        running = client.get().leaderElector().withConfig(config).build().start();
        running.whenComplete((ok, error) -> {
            leadership.set(false);
            if (!stopping) {
                // lost the Lease (or the API): stand again after a pause
                executor.schedule(this::stand, retryPeriod.toMillis(), TimeUnit.MILLISECONDS);
            }
        });
    }

    /** This replica's name in the Lease. */
    public String identity() {
        return identity;
    }

    void stop(@Observes ShutdownEvent event) {
        stopping = true;
        if (running != null) {
            running.cancel(true); // releases the Lease, so a standby takes over without waiting for it to expire
        }
        executor.shutdownNow();
    }
}
