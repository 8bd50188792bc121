package dev.gantry.placement.window;

import dev.gantry.contracts.events.Subjects;
import dev.gantry.placement.cluster.ClusterActionException;
import dev.gantry.placement.cluster.ClusterActuator;
import dev.gantry.placement.persistence.ClusterGang;
import io.quarkus.hibernate.reactive.panache.Panache;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.core.Vertx;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Duration;
import java.time.Instant;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import org.jboss.logging.Logger;

/**
 * Acts on the cluster through the {@link ClusterActuator} for what was recorded: launches a
 * placement's pods (all or none; on failure the placement is undone), evicts and stops gangs.
 * Blocking actuator calls run on a worker thread. It also knows which jobs this replica is
 * launching right now, so a relaunch never races a launch.
 */
@ApplicationScoped
public class GangLauncher {

    private static final Logger LOG = Logger.getLogger(GangLauncher.class);

    private final ClusterActuator cluster;
    private final StandaloneExecutor executor;
    private final Requeue requeue;
    private final Vertx vertx;
    /** Jobs whose pods this replica is launching right now, so a relaunch never races the binder's own launch. */
    private final Set<UUID> launching = ConcurrentHashMap.newKeySet();

    public GangLauncher(ClusterActuator cluster, StandaloneExecutor executor, Requeue requeue, Vertx vertx) {
        this.cluster = cluster;
        this.executor = executor;
        this.requeue = requeue;
        this.vertx = vertx;
    }

    /** Whether there is a cluster to act on (kubernetes mode). */
    boolean acts() {
        return cluster.acts();
    }

    /** Claims the job for this replica's launch; false when it is being launched already. */
    boolean claim(UUID jobId) {
        return launching.add(jobId);
    }

    void unclaim(UUID jobId) {
        launching.remove(jobId);
    }

    /** A recorded placement's pods, when it was written and there is a gang; the item is whether it is placed. */
    Uni<Boolean> launchIfWritten(PlanRecorder.Bound bound) {
        return !bound.written() || bound.gang() == null ? Uni.createFrom().item(bound.written()) : launch(bound.gang());
    }

    /**
     * Pods of a recorded placement onto the cluster, then {@code cluster_gang.launched_at}; on
     * failure the placement is undone.
     */
    Uni<Boolean> launch(ClusterActuator.Gang gang) {
        UUID jobId = gang.ref().jobId();
        return act(() -> cluster.launch(gang)).replaceWith(true).onFailure().recoverWithUni(e -> {
            boolean permanent = e instanceof ClusterActionException c && c.permanent();
            String reason = "pods not bound: " + e.getMessage();
            LOG.warnf("job %s: %s (%s)", jobId, reason, permanent ? "failed" : "requeued");
            return Panache.withTransaction(() -> permanent
                    ? executor.release(jobId, Subjects.PLACEMENTS_FAILED, reason)
                    : requeue.requeue(jobId, Subjects.PLACEMENTS_REQUEUED, reason)).replaceWith(false);
        }).call(launched -> launched ? markLaunched(gang) : Uni.createFrom().voidItem());
    }

    /** All pods of the attempt are bound. Not recorded (a database error): the next relaunch finds them and records it. */
    private Uni<Void> markLaunched(ClusterActuator.Gang gang) {
        UUID jobId = gang.ref().jobId();
        return Panache.withTransaction(() -> ClusterGang.update("launchedAt = ?1 where jobId = ?2 and attempt = ?3",
                        Instant.now(), jobId, gang.attempt()))
                .replaceWithVoid()
                .onFailure().recoverWithUni(e -> {
                    LOG.warnf("job %s launched, but not recorded as launched (relaunched idempotently later): %s", jobId, e.toString());
                    return Uni.createFrom().voidItem();
                });
    }

    /** The pods of a recorded preemption are evicted (with its grace, if it has one); a failure is left to the grace's end. */
    Uni<Void> evictIfToldOrReleased(PreemptionRecorder.Preempted p) {
        if (!p.done() || p.gang() == null) {
            return Uni.createFrom().voidItem();
        }
        return act(() -> cluster.evict(p.gang(), p.grace()))
                .onFailure().invoke(e -> LOG.warnf("evicting the pods of %s failed (deleted when its grace ends): %s",
                        p.gang().jobId(), e.toString()))
                .onFailure().recoverWithNull();
    }

    /** The gang's pods go now (a grace period that is over). */
    Uni<Void> evictNow(ClusterActuator.GangRef gang) {
        return act(() -> cluster.evict(gang, Duration.ZERO));
    }

    /** The rest of the gang's pods go. */
    Uni<Void> stop(ClusterActuator.GangRef gang) {
        return act(() -> cluster.stop(gang));
    }

    /** A blocking cluster call on a worker thread; the result comes back on this context. */
    private Uni<Void> act(Runnable call) {
        return vertx.executeBlocking(Uni.createFrom().item(() -> {
            call.run();
            return null;
        })).replaceWithVoid();
    }
}
