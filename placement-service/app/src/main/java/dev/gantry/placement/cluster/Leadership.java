package dev.gantry.placement.cluster;

import jakarta.enterprise.context.ApplicationScoped;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.jboss.logging.Logger;

/**
 * Whether this replica may act on the cluster (bind, evict, plan). With leader election off (the
 * default, and always in standalone mode) every replica leads; with it on, only the holder of the
 * placement Lease does, and the Kubernetes leader elector flips {@link #set(boolean)}.
 */
@ApplicationScoped
public class Leadership {

    private static final Logger LOG = Logger.getLogger(Leadership.class);

    private final boolean electionEnabled;
    private final AtomicBoolean leader = new AtomicBoolean();
    /** A newer leader took the epoch (LeaderFence): without election this process stops until restarted. */
    private final AtomicBoolean deposed = new AtomicBoolean();
    private final List<Consumer<Boolean>> listeners = new CopyOnWriteArrayList<>();

    public Leadership(
            @ConfigProperty(name = "gantry.placement.binder", defaultValue = "standalone") String binder,
            @ConfigProperty(name = "gantry.placement.leader-election.enabled", defaultValue = "false") boolean enabled) {
        this.electionEnabled = enabled && "kubernetes".equals(binder);
    }

    /** True when this replica may plan, bind and evict. */
    public boolean leading() {
        return electionEnabled ? leader.get() : !deposed.get();
    }

    /** Whether leadership is decided by a Lease (otherwise {@link #leading()} is always true). */
    public boolean electionEnabled() {
        return electionEnabled;
    }

    /** Called by the leader elector when this replica gains or loses the Lease. */
    public void set(boolean leading) {
        if (leader.getAndSet(leading) != leading) {
            listeners.forEach(l -> l.accept(leading));
        }
    }

    /**
     * Another process took over binding (a newer epoch, {@link LeaderFence}). With election this
     * replica stops leading until the Lease is its own again; without, it stops binding for good
     * (a second replica has taken over, as in a rollout) and says so.
     */
    public void depose() {
        if (electionEnabled) {
            set(false);
        } else if (!deposed.getAndSet(true)) {
            LOG.error("another placement process took over binding (a newer leadership epoch); this one no longer plans or binds."
                    + " Run one placement replica without leader election, or enable gantry.placement.leader-election.enabled");
            listeners.forEach(l -> l.accept(false));
        }
    }

    /** Called with the new value whenever this replica starts or stops leading. */
    public void onChange(Consumer<Boolean> listener) {
        listeners.add(listener);
    }
}
