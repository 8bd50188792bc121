package dev.gantry.placement.cluster;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Instance;
import jakarta.enterprise.inject.Produces;
import dev.gantry.placement.kubernetes.KubernetesActuator;
import org.eclipse.microprofile.config.inject.ConfigProperty;

/**
 * {@code gantry.placement.binder}: {@code standalone} (default; allocations are the outcome) or
 * {@code kubernetes} (pods created and bound on the cluster). Chosen at run time, so one build
 * serves both; the Kubernetes client is only created in kubernetes mode.
 */
@ApplicationScoped
public class BinderMode {

    public static final String STANDALONE = "standalone";
    public static final String KUBERNETES = "kubernetes";

    private final String mode;

    public BinderMode(@ConfigProperty(name = "gantry.placement.binder", defaultValue = STANDALONE) String mode) {
        if (!STANDALONE.equals(mode) && !KUBERNETES.equals(mode)) {
            throw new IllegalArgumentException("gantry.placement.binder must be standalone or kubernetes, not " + mode);
        }
        this.mode = mode;
    }

    public boolean kubernetes() {
        return KUBERNETES.equals(mode);
    }

    @Produces
    @ApplicationScoped
    ClusterActuator actuator(Instance<KubernetesActuator> kubernetes) {
        return kubernetes() ? kubernetes.get() : new NoCluster();
    }
}
