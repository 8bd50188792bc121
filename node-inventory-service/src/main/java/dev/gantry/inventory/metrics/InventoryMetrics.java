package dev.gantry.inventory.metrics;

import dev.gantry.contracts.nodes.NodeInfo;
import dev.gantry.inventory.NodeRegistry;
import dev.gantry.inventory.domain.NodeSource;
import dev.gantry.inventory.persistence.NodeEntity;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.MultiGauge;
import io.micrometer.core.instrument.Tags;
import io.quarkus.scheduler.Scheduled;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Gauges over the inventory, refreshed from the database every {@code gantry.inventory.metrics.refresh-every}:
 * {@code gantry_inventory_nodes{model,state}}, {@code gantry_inventory_gpus{model,state}} (state:
 * {@code ready}, {@code cordoned} = Ready but not schedulable, {@code not_ready}, {@code unknown}) and
 * {@code gantry_inventory_heartbeat_age_max_seconds} (the oldest heartbeat among Ready agent nodes).
 */
@ApplicationScoped
public class InventoryMetrics {

    private final NodeRegistry registry;
    private final MultiGauge nodes;
    private final MultiGauge gpus;
    private final AtomicReference<Double> heartbeatAgeMax = new AtomicReference<>(0.0);

    public InventoryMetrics(NodeRegistry registry, MeterRegistry meters) {
        this.registry = registry;
        this.nodes = MultiGauge.builder("gantry.inventory.nodes").description("nodes by GPU model and state").register(meters);
        this.gpus = MultiGauge.builder("gantry.inventory.gpus").description("GPUs by model and node state").register(meters);
        Gauge.builder("gantry.inventory.heartbeat.age.max", heartbeatAgeMax, AtomicReference::get)
                .baseUnit("seconds").description("age of the oldest heartbeat among Ready agent nodes").register(meters);
    }

    @Scheduled(every = "${gantry.inventory.metrics.refresh-every}", concurrentExecution = Scheduled.ConcurrentExecution.SKIP,
            skipExecutionIf = Scheduled.ApplicationNotRunning.class)
    public Uni<Void> refresh() {
        return registry.entities().invoke(this::update).replaceWithVoid();
    }

    static String state(NodeEntity node) {
        return switch (node.health) {
            case READY -> node.schedulable ? "ready" : "cordoned";
            case NOT_READY -> "not_ready";
            case UNKNOWN -> "unknown";
        };
    }

    private void update(List<NodeEntity> all) {
        Map<Tags, long[]> counts = new TreeMap<>((a, b) -> a.toString().compareTo(b.toString()));
        Instant now = Instant.now();
        double oldest = 0;
        for (NodeEntity node : all) {
            Tags tags = Tags.of("model", node.gpuModel == null ? "none" : node.gpuModel, "state", state(node));
            long[] c = counts.computeIfAbsent(tags, t -> new long[2]);
            c[0]++;
            c[1] += node.gpus;
            if (node.source == NodeSource.AGENT && node.health == NodeInfo.Health.READY && node.lastHeartbeat != null) {
                oldest = Math.max(oldest, Duration.between(node.lastHeartbeat, now).toMillis() / 1000.0);
            }
        }
        List<MultiGauge.Row<?>> nodeRows = new ArrayList<>();
        List<MultiGauge.Row<?>> gpuRows = new ArrayList<>();
        counts.forEach((tags, c) -> {
            nodeRows.add(MultiGauge.Row.of(tags, c[0]));
            gpuRows.add(MultiGauge.Row.of(tags, c[1]));
        });
        nodes.register(nodeRows, true);
        gpus.register(gpuRows, true);
        heartbeatAgeMax.set(oldest);
    }
}
