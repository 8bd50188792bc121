package dev.gantry.inventory.kubernetes;

import dev.gantry.contracts.nodes.NodeInfo;
import dev.gantry.inventory.domain.GpuGroups;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeCondition;
import io.fabric8.kubernetes.api.model.Quantity;
import java.math.BigDecimal;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * A Kubernetes Node as the inventory describes it (pure: no API server involved).
 *
 * <ul>
 * <li>GPU Feature Discovery labels: {@code nvidia.com/gpu.product} (model), {@code nvidia.com/gpu.count},
 *     {@code nvidia.com/gpu.memory} (MiB per GPU), {@code nvidia.com/gpu.replicas} and
 *     {@code nvidia.com/gpu.sharing-strategy} (time-slicing/MPS: GPU sharing), {@code nvidia.com/mig.strategy}.
 * <li>{@code status.allocatable}: {@code nvidia.com/gpu} (GPUs when GFD gives no count, divided by the
 *     replicas of shared GPUs), {@code cpu}, {@code memory}, {@code nvidia.com/mig-<profile>} (MIG devices).
 * <li>{@code spec.taints}, {@code spec.unschedulable}, the {@code Ready} condition (health and heartbeat),
 *     label {@code topology.kubernetes.io/zone}.
 * <li>Gantry's annotations: {@code gantry.dev/nvlink-islands} and {@code gantry.dev/numa} (GPU groups, see
 *     {@link GpuGroups}: {@code "0-3;4-7"}), {@code gantry.dev/ib-fabric}, {@code gantry.dev/ib-hcas},
 *     {@code gantry.dev/spine}, {@code gantry.dev/leaf}.
 * </ul>
 * When the GPU driver publishes the node's devices in {@code ResourceSlice}s ({@link DriverDevices}, Dynamic
 * Resource Allocation), they win over the device plugin's labels and allocatable: GPUs are the driver's GPU
 * devices (indices 0..n-1), the model its {@code productName} (unless GFD's label names it), memory per GPU
 * its smallest {@code memory} capacity, NUMA groups its {@code numa} attributes where every GPU has one (else
 * the annotation), MIG profiles its MIG devices, and the GPUs can be shared (the driver shares a GPU through
 * a claim's configuration). NVLink islands stay the annotation's: the driver publishes no NVLink attribute.
 * An annotation that does not parse throws {@link IllegalArgumentException} naming it.
 */
public final class KubernetesNodeMapper {

    public static final String GPU_PRODUCT = "nvidia.com/gpu.product";
    public static final String GPU_COUNT = "nvidia.com/gpu.count";
    public static final String GPU_MEMORY = "nvidia.com/gpu.memory";
    public static final String GPU_REPLICAS = "nvidia.com/gpu.replicas";
    public static final String GPU_SHARING_STRATEGY = "nvidia.com/gpu.sharing-strategy";
    public static final String MIG_STRATEGY = "nvidia.com/mig.strategy";
    public static final String GPU_RESOURCE = "nvidia.com/gpu";
    public static final String MIG_RESOURCE_PREFIX = "nvidia.com/mig-";
    public static final String ZONE = "topology.kubernetes.io/zone";
    public static final String NVLINK_ISLANDS = "gantry.dev/nvlink-islands";
    public static final String NUMA = "gantry.dev/numa";
    public static final String IB_FABRIC = "gantry.dev/ib-fabric";
    public static final String IB_HCAS = "gantry.dev/ib-hcas";
    public static final String SPINE = "gantry.dev/spine";
    public static final String LEAF = "gantry.dev/leaf";

    private KubernetesNodeMapper() {
    }

    public static NodeInfo map(Node node) {
        return map(node, DriverDevices.NONE);
    }

    /** The node as {@link #map(Node)} reads it, with the driver's devices (if any) in place of the device plugin's view. */
    public static NodeInfo map(Node node, DriverDevices devices) {
        NodeInfo plugin = mapFromLabels(node);
        if (devices.gpus().isEmpty()) {
            return plugin;
        }
        List<DriverDevices.Gpu> gpus = devices.gpus();
        for (int i = 0; i < gpus.size(); i++) {
            if (gpus.get(i).index() != i) {
                throw new IllegalArgumentException("ResourceSlices of " + plugin.name() + ": GPU indices are not 0.." + (gpus.size() - 1)
                        + " (device " + gpus.get(i).device() + " has index " + gpus.get(i).index() + ")");
            }
        }
        String model = plugin.labels().containsKey(GPU_PRODUCT) ? plugin.gpuModel()
                : gpus.get(0).productName() == null ? null : gpus.get(0).productName().trim().replace(' ', '-'); // GFD's spelling
        long memory = gpus.stream().mapToLong(DriverDevices.Gpu::memoryMiB).filter(m -> m > 0).min().orElse(plugin.gpuMemoryMiB());
        List<List<Integer>> numa = plugin.numaNodes();
        if (gpus.stream().allMatch(g -> g.numa() != null)) {
            Map<Integer, List<Integer>> byNuma = new TreeMap<>();
            gpus.forEach(g -> byNuma.computeIfAbsent(g.numa(), k -> new java.util.ArrayList<>()).add(g.index()));
            numa = List.copyOf(byNuma.values());
        }
        NodeInfo.Mig mig = devices.migs().isEmpty() ? plugin.mig()
                : new NodeInfo.Mig(plugin.labels().getOrDefault(MIG_STRATEGY, "mixed"), devices.migProfiles());
        return new NodeInfo(plugin.name(), model, gpus.size(), plugin.nvlinkIslands(), numa, true,
                plugin.cpuMillis(), plugin.memoryMiB(), plugin.topology(), plugin.ibFabric(), plugin.labels(), plugin.taints(),
                plugin.schedulable(), plugin.health(), memory, mig, plugin.ibHcas(), false, plugin.lastHeartbeat());
    }

    private static NodeInfo mapFromLabels(Node node) {
        String name = node.getMetadata().getName();
        Map<String, String> labels = node.getMetadata().getLabels() == null ? Map.of() : new TreeMap<>(node.getMetadata().getLabels());
        Map<String, String> annotations = node.getMetadata().getAnnotations() == null ? Map.of() : node.getMetadata().getAnnotations();
        Map<String, Quantity> allocatable = node.getStatus() == null || node.getStatus().getAllocatable() == null
                ? Map.of() : node.getStatus().getAllocatable();

        int replicas = Math.max(1, intLabel(labels, GPU_REPLICAS, 1));
        int gpus = labels.containsKey(GPU_COUNT)
                ? intLabel(labels, GPU_COUNT, 0)
                : (int) (amount(allocatable.get(GPU_RESOURCE)).longValue() / replicas);
        String strategy = labels.get(GPU_SHARING_STRATEGY);
        boolean sharing = replicas > 1 || "time-slicing".equals(strategy) || "mps".equals(strategy);

        NodeInfo.Mig mig = null;
        Map<String, Integer> profiles = new TreeMap<>();
        allocatable.forEach((resource, quantity) -> {
            if (resource.startsWith(MIG_RESOURCE_PREFIX)) {
                profiles.put(resource.substring(MIG_RESOURCE_PREFIX.length()), amount(quantity).intValue());
            }
        });
        if (labels.containsKey(MIG_STRATEGY) || !profiles.isEmpty()) {
            mig = new NodeInfo.Mig(labels.getOrDefault(MIG_STRATEGY, "mixed"), profiles);
        }

        List<NodeInfo.Taint> taints = node.getSpec() == null || node.getSpec().getTaints() == null ? List.of()
                : node.getSpec().getTaints().stream()
                        .map(t -> new NodeInfo.Taint(t.getKey(), t.getValue(), t.getEffect())).toList();
        boolean schedulable = node.getSpec() == null || !Boolean.TRUE.equals(node.getSpec().getUnschedulable());

        NodeInfo.Health health = NodeInfo.Health.UNKNOWN;
        Instant heartbeat = null;
        if (node.getStatus() != null && node.getStatus().getConditions() != null) {
            for (NodeCondition condition : node.getStatus().getConditions()) {
                if ("Ready".equals(condition.getType())) {
                    health = switch (String.valueOf(condition.getStatus())) {
                        case "True" -> NodeInfo.Health.READY;
                        case "False" -> NodeInfo.Health.NOT_READY;
                        default -> NodeInfo.Health.UNKNOWN;
                    };
                    heartbeat = instant(condition.getLastHeartbeatTime());
                }
            }
        }

        String ibFabric = blankToNull(annotations.get(IB_FABRIC));
        return new NodeInfo(name, labels.get(GPU_PRODUCT), gpus,
                groups(annotations, NVLINK_ISLANDS), groups(annotations, NUMA), sharing,
                amount(allocatable.get("cpu")).movePointRight(3).longValue(),
                amount(allocatable.get("memory")).divide(BigDecimal.valueOf(1024L * 1024L), java.math.RoundingMode.DOWN).longValue(),
                new NodeInfo.Topology(blankToNull(labels.get(ZONE)), blankToNull(annotations.get(SPINE)), blankToNull(annotations.get(LEAF))),
                ibFabric, labels, taints, schedulable, health,
                labels.containsKey(GPU_MEMORY) ? longLabel(labels, GPU_MEMORY) : 0,
                mig, annotations.containsKey(IB_HCAS) ? intLabel(annotations, IB_HCAS, 0) : 0, false, heartbeat);
    }

    private static List<List<Integer>> groups(Map<String, String> annotations, String key) {
        try {
            return GpuGroups.parse(annotations.get(key));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("annotation " + key + ": " + e.getMessage(), e);
        }
    }

    private static BigDecimal amount(Quantity quantity) {
        if (quantity == null) {
            return BigDecimal.ZERO;
        }
        try {
            return Quantity.getAmountInBytes(quantity);
        } catch (IllegalArgumentException | ArithmeticException e) {
            throw new IllegalArgumentException("quantity '" + quantity + "' does not parse", e);
        }
    }

    private static int intLabel(Map<String, String> values, String key, int fallback) {
        long value = longLabel(values, key, fallback);
        if (value > Integer.MAX_VALUE || value < Integer.MIN_VALUE) {
            throw new IllegalArgumentException(key + ": '" + values.get(key) + "' is out of range");
        }
        return (int) value;
    }

    private static long longLabel(Map<String, String> values, String key) {
        return longLabel(values, key, 0);
    }

    private static long longLabel(Map<String, String> values, String key, long fallback) {
        String text = values.get(key);
        if (text == null || text.isBlank()) {
            return fallback;
        }
        try {
            return Long.parseLong(text.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(key + ": '" + text + "' is not a whole number", e);
        }
    }

    private static Instant instant(String text) {
        if (text == null || text.isBlank()) {
            return null;
        }
        try {
            return Instant.parse(text);
        } catch (DateTimeParseException e) {
            return null;
        }
    }

    private static String blankToNull(String text) {
        return text == null || text.isBlank() ? null : text.trim();
    }
}
