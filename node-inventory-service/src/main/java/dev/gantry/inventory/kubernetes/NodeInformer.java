package dev.gantry.inventory.kubernetes;

import dev.gantry.contracts.nodes.NodeInfo;
import dev.gantry.inventory.NodeRegistry;
import dev.gantry.inventory.domain.NodeSource;
import dev.gantry.kit.problem.InvalidRequestException;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.runtime.StartupEvent;
import io.quarkus.vertx.VertxContextSupport;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.enterprise.inject.Instance;
import java.time.Duration;
import java.util.Set;
import java.util.stream.Collectors;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.jboss.logging.Logger;

/**
 * The Kubernetes source: an informer over Nodes (list + watch, relisted every
 * {@code gantry.inventory.kubernetes.resync}) feeding {@link NodeRegistry}. Started only when
 * {@code gantry.inventory.kubernetes.enabled} is true: otherwise the client bean is never created
 * and nothing connects. A Node that does not map (a bad annotation, an invalid count) is logged,
 * counted ({@code gantry_inventory_kubernetes_rejected_total}) and skipped.
 */
@ApplicationScoped
public class NodeInformer {

    private static final Logger LOG = Logger.getLogger(NodeInformer.class);

    private final boolean enabled;
    private final Duration resync;
    private final Instance<KubernetesClient> client;
    private final NodeRegistry registry;
    private final Counter rejected;
    private volatile SharedIndexInformer<Node> informer;

    public NodeInformer(@ConfigProperty(name = "gantry.inventory.kubernetes.enabled") boolean enabled,
            @ConfigProperty(name = "gantry.inventory.kubernetes.resync") Duration resync,
            Instance<KubernetesClient> client, NodeRegistry registry, MeterRegistry meters) {
        this.enabled = enabled;
        this.resync = resync;
        this.client = client;
        this.registry = registry;
        this.rejected = meters.counter("gantry.inventory.kubernetes.rejected");
    }

    void start(@Observes StartupEvent event) {
        if (!enabled) {
            LOG.debug("Kubernetes node source disabled (gantry.inventory.kubernetes.enabled=false)");
            return;
        }
        informer = client.get().nodes().inform(new ResourceEventHandler<>() {
            @Override
            public void onAdd(Node node) {
                upsert(node);
            }

            @Override
            public void onUpdate(Node oldNode, Node newNode) {
                upsert(newNode);
            }

            @Override
            public void onDelete(Node node, boolean deletedFinalStateUnknown) {
                remove(node.getMetadata().getName());
            }
        }, resync.toMillis());
        informer.stopped().whenComplete((ignored, e) -> {
            if (e != null) {
                LOG.error("Kubernetes node informer stopped", e);
            }
        });
        removeVanished();
        LOG.infof("watching Kubernetes Nodes (resync %s)", resync);
    }

    /** Whether the informer runs (false when the source is disabled: no client was created). */
    public boolean watching() {
        return informer != null;
    }

    void stop(@Observes ShutdownEvent event) {
        if (informer != null) {
            informer.close();
        }
    }

    /** Kubernetes nodes stored earlier but absent from the API server now (deleted while we were down) go. */
    private void removeVanished() {
        Set<String> present = informer.getStore().list().stream().map(n -> n.getMetadata().getName()).collect(Collectors.toSet());
        try {
            VertxContextSupport.subscribeAndAwait(() -> registry.entities()).stream()
                    .filter(e -> e.source == NodeSource.KUBERNETES && !present.contains(e.name))
                    .forEach(e -> remove(e.name));
        } catch (Throwable e) {
            LOG.warn("could not reconcile vanished Kubernetes nodes", e);
        }
    }

    private void upsert(Node node) {
        String name = node.getMetadata().getName();
        try {
            NodeInfo described = KubernetesNodeMapper.map(node);
            VertxContextSupport.subscribeAndAwait(() -> registry.upsert(described, NodeSource.KUBERNETES));
        } catch (InvalidRequestException e) {
            rejected.increment();
            LOG.warnf("Kubernetes node %s skipped: %s %s", name, e.getMessage(), e.errors());
        } catch (IllegalArgumentException e) {
            rejected.increment();
            LOG.warnf("Kubernetes node %s skipped: %s", name, e.getMessage());
        } catch (Throwable e) {
            LOG.errorf(e, "Kubernetes node %s not stored (the next resync retries)", name);
        }
    }

    private void remove(String name) {
        try {
            VertxContextSupport.subscribeAndAwait(() -> registry.remove(name, NodeSource.KUBERNETES));
        } catch (Throwable e) {
            LOG.errorf(e, "Kubernetes node %s not removed (the next resync retries)", name);
        }
    }
}
