package dev.gantry.placement.cluster;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.hibernate.reactive.panache.Panache;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;
import org.jboss.logging.Logger;

/**
 * The fencing token of binding: a leadership epoch kept in the database (table
 * {@code placement_leader}). The first bind or preemption transaction after this process starts to
 * lead takes the next epoch; every later one locks the row and checks that the epoch is still
 * this process's. When another process has taken a newer epoch (a new leader after a Lease
 * hand-over, a second replica during a rollout), this one's transaction fails with
 * {@link DeposedException} and it stops binding: a deposed leader's late writes never land.
 */
@ApplicationScoped
public class LeaderFence {

    private static final Logger LOG = Logger.getLogger(LeaderFence.class);

    /** A newer leader holds the epoch: nothing this transaction wrote may stay. */
    public static class DeposedException extends RuntimeException {
        public DeposedException(long mine, long current, String holder) {
            super("another placement process (" + holder + ") took over binding at epoch " + current + "; this one held " + mine);
        }
    }

    private final Leadership leadership;
    private final Pool pool;
    private final String me = "placement-" + UUID.randomUUID().toString().substring(0, 8);
    /** 0: no epoch held (not taken yet, or lost); taken again by the next guarded transaction while leading. */
    private final AtomicLong epoch = new AtomicLong();
    private final Counter deposed;

    public LeaderFence(Leadership leadership, Pool pool, MeterRegistry registry) {
        this.leadership = leadership;
        this.pool = pool;
        this.deposed = registry.counter("gantry.placement.fenced.writes");
        leadership.onChange(leading -> epoch.set(0)); // a new term takes a new epoch
    }

    /** The epoch this process holds (0: none). */
    public long epoch() {
        return epoch.get();
    }

    /**
     * Call first inside every transaction that binds or preempts: takes the epoch if this process
     * has none yet, else checks it is still the current one (the row stays locked to the commit, so
     * a new leader's take waits for this transaction and no late write slips in after it).
     */
    public Uni<Void> guard() {
        long mine = epoch.get();
        if (mine == 0) {
            return take().chain(this::guard);
        }
        return Panache.getSession().chain(session -> session.createNativeQuery(
                "select epoch, holder from placement_leader where id = 1 for share", Object[].class).getSingleResult())
                .invoke(row -> {
                    long current = ((Number) row[0]).longValue();
                    if (current < mine) {
                        // epochs only grow: a smaller one is a bad read, not a newer leader; deposing on it
                        // would stop this process binding for good (standalone mode has no election to win back)
                        throw new IllegalStateException("leadership epoch read as " + current + " below this process's " + mine);
                    }
                    if (current != mine) {
                        deposed.increment();
                        leadership.depose();
                        throw new DeposedException(mine, current, String.valueOf(row[1]));
                    }
                })
                .replaceWithVoid();
    }

    /**
     * Takes the next epoch in a statement of its own, committed at once. Taken inside the binding
     * transaction, it was rolled back with it when that transaction failed while this process kept
     * the epoch it had read: its next check found an older epoch than its own and deposed it, and
     * without election that stopped binding until a restart. Two takes racing in this process leave
     * it the newer one.
     */
    private Uni<Void> take() {
        return pool.preparedQuery("update placement_leader set epoch = epoch + 1, holder = $1, acquired_at = now() where id = 1 returning epoch")
                .execute(Tuple.of(me))
                .map(rows -> rows.iterator().next().getLong(0))
                .invoke(taken -> {
                    epoch.accumulateAndGet(taken, Math::max);
                    LOG.infof("%s binds at leadership epoch %d", me, taken);
                })
                .replaceWithVoid();
    }
}
