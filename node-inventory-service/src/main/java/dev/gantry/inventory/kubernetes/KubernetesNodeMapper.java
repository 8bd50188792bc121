package dev.gantry.inventory.kubernetes;

import dev.gantry.contracts.nodes.NodeInfo;
import dev.gantry.contracts.resources.MigProfile;
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
 * devices and the GPUs in MIG mode its MIG devices are carved from (indices 0..n-1), the model its
 * {@code productName} (unless GFD's label names it), memory per GPU its smallest {@code memory} capacity, NUMA
 * groups its {@code numa} attributes where every GPU has one (else the annotation), MIG devices one by one (id:
 * the MIG UUID) and counted per profile, and the GPUs can be shared (the driver shares a GPU through a claim's
 * configuration). NVLink islands stay the annotation's: the driver publishes no NVLink attribute.
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
        if (devices.isEmpty()) {
            return plugin;
        }
        List<DriverDevices.Gpu> gpus = devices.gpus();
        // a GPU in MIG mode is published as its MIG devices only: it counts among the node's GPUs all the same
        List<Integer> indices = devices.gpuIndices();
        for (int i = 0; i < indices.size(); i++) {
            if (indices.get(i) != i) {
                throw new IllegalArgumentException("ResourceSlices of " + plugin.name() + ": GPU indices are not 0.." + (indices.size() - 1)
                        + " (GPUs and MIG devices' GPUs: " + indices + ")");
            }
        }
        String product = !gpus.isEmpty() ? gpus.get(0).productName() : devices.migs().get(0).productName();
        String model = plugin.labels().containsKey(GPU_PRODUCT) ? plugin.gpuModel()
                : product == null ? null : product.trim().replace(' ', '-'); // GFD's spelling
        long memory = gpus.stream().mapToLong(DriverDevices.Gpu::memoryMiB).filter(m -> m > 0).min().orElse(plugin.gpuMemoryMiB());
        List<List<Integer>> numa = plugin.numaNodes();
        if (!gpus.isEmpty() && gpus.stream().allMatch(g -> g.numa() != null)) {
            Map<Integer, List<Integer>> byNuma = new TreeMap<>();
            gpus.forEach(g -> byNuma.computeIfAbsent(g.numa(), k -> new java.util.ArrayList<>()).add(g.index()));
            numa = List.copyOf(byNuma.values());
        }
        NodeInfo.Mig mig = devices.migs().isEmpty() ? plugin.mig()
                : new NodeInfo.Mig(plugin.labels().getOrDefault(MIG_STRATEGY, "mixed"), devices.migProfiles(), devices.migs().stream()
                        .map(m -> new NodeInfo.MigDevice(m.uuid() != null ? m.uuid() : m.device(), m.gpu(), m.profile(), m.device())).toList());
        return new NodeInfo(plugin.name(), model, indices.size(), plugin.nvlinkIslands(), numa, true,
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
                String profile = MigProfile.ofResource(resource); // nvidia.com/mig-1g.10gb.me is profile 1g.10gb+me
                profiles.put(profile != null ? profile : resource.substring(MIG_RESOURCE_PREFIX.length()), amount(quantity).intValue());
            }
        });
        if (labels.containsKey(MIG_STRATEGY) || !profiles.isEmpty()) {
            String migStrategy = labels.getOrDefault(MIG_STRATEGY, "mixed");
            int whole = (int) (amount(allocatable.get(GPU_RESOURCE)).longValue() / replicas);
            mig = new NodeInfo.Mig(migStrategy, profiles, "mixed".equals(migStrategy) && labels.containsKey(GPU_COUNT)
                    ? devicePluginMigDevices(gpus, gpus - whole, profiles) : List.of());
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

    /**
     * The MIG devices NVIDIA's device plugin (mixed strategy) advertises as counts per profile
     * ({@code nvidia.com/mig-1g.10gb: 7}), laid out for Gantry's bookkeeping: the GPUs in MIG mode are the last
     * {@code migGpus} ({@code nvidia.com/gpu.count} less the allocatable whole GPUs), biggest profile first, each
     * device on the least used of them that has the slices left (so every such GPU gets one when there are
     * enough); ids {@code mig-<profile>-<n>}. Which GPU carries which device is not known
     * from the labels, and need not be: the kubelet's device manager picks the device a pod's
     * {@code nvidia.com/mig-<profile>} request gets. Empty when no GPU is in MIG mode by these counts.
     */
    static List<NodeInfo.MigDevice> devicePluginMigDevices(int gpus, int migGpus, Map<String, Integer> profiles) {
        if (migGpus <= 0 || migGpus > gpus) {
            return List.of();
        }
        List<String> order = profiles.keySet().stream().filter(MigProfile::valid)
                .sorted(java.util.Comparator.comparingInt(MigProfile::slices).reversed().thenComparing(p -> p)).toList();
        int first = gpus - migGpus;
        int[] used = new int[migGpus];
        List<NodeInfo.MigDevice> out = new java.util.ArrayList<>();
        for (String profile : order) {
            int slices = MigProfile.slices(profile);
            for (int n = 0; n < profiles.get(profile); n++) {
                int gpu = -1;
                int least = 0;
                for (int g = 0; g < migGpus; g++) {
                    if (used[g] + slices <= MigProfile.SLICES_PER_GPU && (gpu < 0 || used[g] < used[gpu])) {
                        gpu = g;
                    }
                    least = used[g] < used[least] ? g : least;
                }
                gpu = gpu < 0 ? least : gpu; // more than the GPUs hold: the least used one (bookkeeping only)
                used[gpu] += slices;
                out.add(new NodeInfo.MigDevice("mig-" + profile + "-" + n, first + gpu, profile, null));
            }
        }
        return out;
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
