package dev.gantry.placement.messaging;

import dev.gantry.placement.window.WindowLoop;
import io.quarkus.hibernate.reactive.panache.Panache;
import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.runtime.StartupEvent;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.core.Vertx;
import io.vertx.mutiny.pgclient.pubsub.PgSubscriber;
import io.vertx.pgclient.PgConnectOptions;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import java.time.Duration;
import java.time.Instant;
import java.util.UUID;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.jboss.logging.Logger;

/**
 * Wakes the leader's fast path for a job that any replica stored. The replicas share the jobs
 * consumer, so each {@code jobs.queued} reaches one of them, but only the leader plans. Storing a
 * job therefore also sends a PostgreSQL {@code NOTIFY} in the same transaction (delivered at
 * commit, never for a rolled-back store), every replica listens, and the leading one offers the job
 * its fast path. A lost signal (the listener reconnecting) costs latency only: the next window
 * plans the job.
 */
@ApplicationScoped
public class QueuedJobSignal {

    private static final Logger LOG = Logger.getLogger(QueuedJobSignal.class);
    static final String CHANNEL = "gantry_jobs_queued";

    private final WindowLoop windows;
    private final Vertx vertx;
    private final PgConnectOptions options;
    private PgSubscriber subscriber;

    public QueuedJobSignal(WindowLoop windows, Vertx vertx, @ConfigProperty(name = "quarkus.datasource.reactive.url") String url,
            @ConfigProperty(name = "quarkus.datasource.username") String user,
            @ConfigProperty(name = "quarkus.datasource.password", defaultValue = "") String password) {
        this.windows = windows;
        this.vertx = vertx;
        this.options = PgConnectOptions.fromUri(url).setUser(user).setPassword(password);
    }

    /** Inside the transaction that stores the job: the signal leaves when it commits. */
    static Uni<Void> send(UUID jobId, Instant receivedAt) {
        return Panache.getSession().chain(session -> session.createNativeQuery("select 1 from pg_notify(?1, ?2)")
                .setParameter(1, CHANNEL).setParameter(2, jobId + " " + receivedAt.toEpochMilli()).getSingleResult()).replaceWithVoid();
    }

    void listen(@Observes StartupEvent started) {
        subscriber = PgSubscriber.subscriber(vertx, options).reconnectPolicy(attempts -> 1000L); // after a lost connection: every second
        subscriber.channel(CHANNEL).handler(this::received);
        subscriber.connect().onFailure().retry().withBackOff(Duration.ofSeconds(1), Duration.ofSeconds(10)).indefinitely()
                .subscribe().with(ok -> LOG.debugf("listening on %s", CHANNEL),
                        e -> LOG.warnf("not listening on %s (jobs wait for the window): %s", CHANNEL, e.toString()));
    }

    void close(@Observes ShutdownEvent stopping) {
        if (subscriber != null) {
            subscriber.closeAndForget();
        }
    }

    /** {@code "<job id> <epoch millis when the event arrived>"}: the fast path's latency counts from the arrival. */
    private void received(String payload) {
        String[] parts = payload.split(" ");
        try {
            UUID jobId = UUID.fromString(parts[0]);
            long waitedMillis = parts.length > 1 ? Math.max(0, System.currentTimeMillis() - Long.parseLong(parts[1])) : 0;
            windows.offerFastPath(jobId, System.nanoTime() - waitedMillis * 1_000_000);
        } catch (IllegalArgumentException e) {
            LOG.warnf("ignoring a malformed %s signal: %s", CHANNEL, payload);
        }
    }
}
