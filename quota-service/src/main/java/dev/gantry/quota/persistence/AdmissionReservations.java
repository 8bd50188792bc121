package dev.gantry.quota.persistence;

import io.quarkus.hibernate.reactive.panache.Panache;
import io.quarkus.hibernate.reactive.panache.common.WithTransaction;
import io.quarkus.scheduler.Scheduled;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Duration;
import java.util.UUID;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.jboss.logging.Logger;

/**
 * The places admission checks reserved among users' pending jobs ({@code admission_reservation}):
 * released when the job's {@code jobs.queued} or {@code jobs.cancelled} arrives, and dropped after
 * {@code gantry.quota.reservation-ttl} when it never does (admission failed to store the job after
 * quota allowed it), so a lost submission does not count against its user for ever.
 */
@ApplicationScoped
public class AdmissionReservations {

    private static final Logger LOG = Logger.getLogger(AdmissionReservations.class);

    private final Duration ttl;

    public AdmissionReservations(@ConfigProperty(name = "gantry.quota.reservation-ttl", defaultValue = "10m") Duration ttl) {
        this.ttl = ttl;
    }

    /** Inside the caller's transaction: the job's event arrived, its reservation is no longer needed. */
    public static Uni<Void> release(UUID jobId) {
        return Panache.getSession().chain(session -> session
                .createNativeQuery("delete from admission_reservation where job_id = ?1").setParameter(1, jobId).executeUpdate())
                .replaceWithVoid();
    }

    @Scheduled(every = "${gantry.quota.reservation-sweep:1m}", concurrentExecution = Scheduled.ConcurrentExecution.SKIP)
    @WithTransaction
    Uni<Void> dropExpired() {
        return Panache.getSession().chain(session -> session
                .createNativeQuery("delete from admission_reservation where reserved_at < now() - make_interval(secs => ?1)")
                .setParameter(1, (double) ttl.toSeconds()).executeUpdate())
                .invoke(dropped -> {
                    if (dropped > 0) {
                        LOG.infof("dropped %d admission reservations older than %s: their jobs never arrived", dropped, ttl);
                    }
                })
                .replaceWithVoid();
    }
}
