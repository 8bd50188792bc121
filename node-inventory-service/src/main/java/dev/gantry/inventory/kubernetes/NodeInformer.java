package dev.gantry.inventory.kubernetes;

import dev.gantry.contracts.nodes.NodeInfo;
import dev.gantry.inventory.NodeRegistry;
import dev.gantry.inventory.domain.NodeSource;
import dev.gantry.kit.problem.InvalidRequestException;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
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
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
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
 *
 * <p>With {@code gantry.inventory.kubernetes.dra.enabled} (the default) a second informer follows the
 * {@code ResourceSlice}s of the GPU driver {@code gantry.inventory.kubernetes.dra.driver}: a node the driver
 * publishes devices for is described from them ({@link DriverDevices}, {@link KubernetesNodeMapper#map(Node, DriverDevices)}),
 * one without slices from its device-plugin labels as before. A slice change describes its node again. A
 * cluster without the {@code resource.k8s.io/v1} API logs a warning and keeps to the labels.
 */
@ApplicationScoped
public class NodeInformer {

    private static final Logger LOG = Logger.getLogger(NodeInformer.class);
    /** How long the start waits for the first list of ResourceSlices. */
    private static final Duration SLICES_START = Duration.ofSeconds(30);

    private final boolean enabled;
    private final Duration resync;
    private final Instance<KubernetesClient> client;
    private final NodeRegistry registry;
    private final Counter rejected;
    private volatile SharedIndexInformer<Node> informer;
    private final boolean dra;
    private final String driver;
    private volatile SharedIndexInformer<ResourceSlice> slices;

    public NodeInformer(@ConfigProperty(name = "gantry.inventory.kubernetes.enabled") boolean enabled,
            @ConfigProperty(name = "gantry.inventory.kubernetes.resync") Duration resync,
            @ConfigProperty(name = "gantry.inventory.kubernetes.dra.enabled", defaultValue = "true") boolean dra,
            @ConfigProperty(name = "gantry.inventory.kubernetes.dra.driver", defaultValue = "gpu.nvidia.com") String driver,
            Instance<KubernetesClient> client, NodeRegistry registry, MeterRegistry meters) {
        this.enabled = enabled;
        this.dra = dra;
        this.driver = driver;
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
        if (dra) {
            startSlices(); // first: a node seen next is described from its slices at once
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

    /** The driver's slices, listed and watched (cluster-scoped: {@code list,watch} on {@code resource.k8s.io/resourceslices}). */
    private void startSlices() {
        SharedIndexInformer<ResourceSlice> informing = client.get().resources(ResourceSlice.class).runnableInformer(resync.toMillis());
        informing.addEventHandler(new ResourceEventHandler<>() {
            @Override
            public void onAdd(ResourceSlice slice) {
                describeAgain(slice);
            }

            @Override
            public void onUpdate(ResourceSlice before, ResourceSlice slice) {
                describeAgain(slice);
            }

            @Override
            public void onDelete(ResourceSlice slice, boolean deletedFinalStateUnknown) {
                describeAgain(slice);
            }
        });
        // a cluster without the API (before Kubernetes 1.34, or DRA off) must not hold up the start: wait a while, then go on
        try {
            informing.start().toCompletableFuture().get(SLICES_START.toMillis(), TimeUnit.MILLISECONDS);
            slices = informing;
            LOG.infof("watching ResourceSlices of driver %s", driver);
        } catch (TimeoutException e) {
            slices = informing; // still listing: nodes are described again as its slices arrive
            LOG.warnf("ResourceSlices not listed within %s; nodes are described from their labels until they are", SLICES_START);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            informing.stop();
        } catch (ExecutionException | RuntimeException e) {
            informing.stop();
            slices = null;
            LOG.warnf("ResourceSlices not readable (no resource.k8s.io/v1 API, or no right to list them): nodes are described "
                    + "from their device-plugin labels only: %s", e.getCause() == null ? e.toString() : e.getCause().toString());
        }
    }

    /** A slice of our driver changed: its node (if we know it) is described again. */
    private void describeAgain(ResourceSlice slice) {
        if (slice.getSpec() == null || !driver.equals(slice.getSpec().getDriver()) || slice.getSpec().getNodeName() == null) {
            return;
        }
        SharedIndexInformer<Node> nodes = informer;
        Node node = nodes == null ? null : nodes.getStore().getByKey(slice.getSpec().getNodeName());
        if (node != null) {
            upsert(node);
        }
    }

    /** The devices the driver publishes for a node (none without the slice informer). */
    private DriverDevices devicesOf(String node) {
        SharedIndexInformer<ResourceSlice> s = slices;
        return s == null ? DriverDevices.NONE : DriverDevices.of(driver, node, s.getStore().list());
    }

    /** Whether the informer runs (false when the source is disabled: no client was created). */
    public boolean watching() {
        return informer != null;
    }

    void stop(@Observes ShutdownEvent event) {
        if (informer != null) {
            informer.close();
        }
        if (slices != null) {
            slices.close();
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

    private synchronized void upsert(Node node) { // both informers describe nodes: one description at a time
        String name = node.getMetadata().getName();
        try {
            NodeInfo described = KubernetesNodeMapper.map(node, devicesOf(name));
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
