package dev.gantry.placement.kubernetes;

import dev.gantry.placement.cluster.BinderMode;
import io.quarkus.hibernate.reactive.panache.Panache;
import io.quarkus.runtime.StartupEvent;
import io.quarkus.vertx.VertxContextSupport;
import io.smallrye.mutiny.Uni;
import jakarta.annotation.Priority;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import java.security.SecureRandom;

/**
 * The key of {@link PodProvenance}, kept in placement's database (made once by the first replica,
 * shared by all, surviving restarts, so a pod made before a restart is still recognised). Loaded at
 * start in kubernetes mode, before the pod watcher and the binder use it.
 */
@ApplicationScoped
public class PodSigningKey {

    private static final String NAME = "pod-signing-key";

    private final boolean kubernetes;
    private volatile PodProvenance provenance;

    public PodSigningKey(BinderMode mode) {
        this.kubernetes = mode.kubernetes();
    }

    void load(@Observes @Priority(1) StartupEvent event) throws Throwable {
        if (kubernetes) {
            byte[] key = VertxContextSupport.subscribeAndAwait(() -> Panache.withTransaction(this::readOrMake));
            provenance = new PodProvenance(key);
        }
    }

    /** The signer; only in kubernetes mode, after start. */
    public PodProvenance provenance() {
        PodProvenance loaded = provenance;
        if (loaded == null) {
            throw new IllegalStateException("the pod signing key is loaded at start in kubernetes mode only");
        }
        return loaded;
    }

    private Uni<byte[]> readOrMake() {
        byte[] fresh = new byte[32];
        new SecureRandom().nextBytes(fresh);
        // a replica starting at the same time may make one first: the first insert wins, everyone reads it
        return Panache.getSession().chain(session -> session
                .createNativeQuery("insert into placement_secret (name, value) values (?1, ?2) on conflict (name) do nothing")
                .setParameter(1, NAME).setParameter(2, fresh).executeUpdate()
                .chain(() -> session.createNativeQuery("select value from placement_secret where name = ?1", byte[].class)
                        .setParameter(1, NAME).getSingleResult()));
    }
}
