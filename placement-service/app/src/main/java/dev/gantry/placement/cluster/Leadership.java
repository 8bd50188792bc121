package dev.gantry.placement.cluster;

import jakarta.enterprise.context.ApplicationScoped;
import java.util.concurrent.atomic.AtomicBoolean;
import org.eclipse.microprofile.config.inject.ConfigProperty;

/**
 * Whether this replica may act on the cluster (bind, evict, plan). With leader election off (the
 * default, and always in standalone mode) every replica leads; with it on, only the holder of the
 * placement Lease does, and the Kubernetes leader elector flips {@link #set(boolean)}.
 */
@ApplicationScoped
public class Leadership {

    private final boolean electionEnabled;
    private final AtomicBoolean leader = new AtomicBoolean();

    public Leadership(
            @ConfigProperty(name = "gantry.placement.binder", defaultValue = "standalone") String binder,
            @ConfigProperty(name = "gantry.placement.leader-election.enabled", defaultValue = "false") boolean enabled) {
        this.electionEnabled = enabled && "kubernetes".equals(binder);
    }

    /** True when this replica may plan, bind and evict. */
    public boolean leading() {
        return !electionEnabled || leader.get();
    }

    /** Whether leadership is decided by a Lease (otherwise {@link #leading()} is always true). */
    public boolean electionEnabled() {
        return electionEnabled;
    }

    /** Called by the leader elector when this replica gains or loses the Lease. */
    public void set(boolean leading) {
        leader.set(leading);
    }
}
