package dev.gantry.inventory.kubernetes;

import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.resource.v1.Device;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceAttribute;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceCapacity;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The GPUs and MIG devices one GPU driver publishes for a node in its {@code ResourceSlice}s
 * ({@code resource.k8s.io/v1}, Dynamic Resource Allocation). Pure: no API server involved.
 *
 * <p>Read as NVIDIA's DRA driver publishes them (its kubelet plugin, {@code cmd/gpu-kubelet-plugin/deviceinfo.go}
 * and {@code mig.go}): the pool is named after the node; attribute {@code type} is {@code gpu} or {@code mig};
 * {@code uuid}, {@code productName}, {@code cudaComputeCapability}; MIG devices add {@code profile} and
 * {@code parentUUID}; capacity {@code memory} in bytes. The GPU's index is attribute {@code index} (drivers up to
 * 25.8 publish it), else {@code minor}, else the number in the device name {@code gpu-<minor>} (newer drivers
 * publish neither attribute and name GPUs by minor number). NUMA is attribute {@code numa} where published.
 * Attribute names may also come qualified with the driver's domain ({@code gpu.nvidia.com/index}).
 * Only the newest generation of each pool counts: slices of an older one are being replaced.
 *
 * <p>MIG: the driver publishes a GPU in MIG mode as its MIG devices only, not as a GPU device ({@code nvlib.go}:
 * a MIG-enabled GPU is not added to the allocatable devices, its MIG devices are). A MIG device's GPU is attribute
 * {@code parentIndex} (drivers up to 25.3), else the GPU device its {@code parentUUID} names, else the number in
 * its name {@code gpu-<parent minor>-mig-...} (every driver names MIG devices so). MIG devices that consume
 * shared counters are the possible partitions of the driver's dynamic MIG (feature gate {@code DynamicMIG},
 * KEP-4815 partitionable devices), not devices that exist: they overlap, and are left out.
 */
public record DriverDevices(List<Gpu> gpus, List<Mig> migs) {

    /** One whole GPU: its index on the node, the device and pool names a claim's allocation names. */
    public record Gpu(int index, String device, String pool, String uuid, String productName, String computeCapability,
            long memoryMiB, Integer numa) {
    }

    /** One MIG device, the index of the GPU it is carved from ({@code gpu}) and that GPU's product name. */
    public record Mig(String device, String pool, String uuid, String profile, String parentUuid, long memoryMiB, int gpu,
            String productName) {
    }

    public static final DriverDevices NONE = new DriverDevices(List.of(), List.of());

    private static final Pattern GPU_NAME = Pattern.compile("^gpu-(\\d+)$");
    private static final Pattern MIG_NAME = Pattern.compile("^gpu-(\\d+)-mig-.+$");

    public boolean isEmpty() {
        return gpus.isEmpty() && migs.isEmpty();
    }

    /** The devices {@code driver} publishes for {@code node} among {@code slices} (any driver, any node). */
    public static DriverDevices of(String driver, String node, Collection<ResourceSlice> slices) {
        Map<String, Long> newest = new HashMap<>();
        List<ResourceSlice> mine = slices.stream()
                .filter(s -> s.getSpec() != null && driver.equals(s.getSpec().getDriver()) && node.equals(s.getSpec().getNodeName())
                        && s.getSpec().getPool() != null && s.getSpec().getPool().getName() != null)
                .toList();
        mine.forEach(s -> newest.merge(s.getSpec().getPool().getName(), generation(s), Math::max));
        List<Gpu> gpus = new ArrayList<>();
        List<Device> migDevices = new ArrayList<>();
        List<String> migPools = new ArrayList<>();
        for (ResourceSlice slice : mine) {
            String pool = slice.getSpec().getPool().getName();
            if (generation(slice) < newest.get(pool) || slice.getSpec().getDevices() == null) {
                continue;
            }
            for (Device d : slice.getSpec().getDevices()) {
                String type = string(d, driver, "type");
                if ("gpu".equals(type)) {
                    Integer index = index(d, driver);
                    if (index == null) {
                        throw new IllegalArgumentException("ResourceSlice " + slice.getMetadata().getName() + ": GPU device " + d.getName()
                                + " has no index (attribute index or minor, or a name gpu-<n>)");
                    }
                    Long numa = integer(d, driver, "numa");
                    gpus.add(new Gpu(index, d.getName(), pool, string(d, driver, "uuid"), string(d, driver, "productName"),
                            version(d, driver, "cudaComputeCapability"), memoryMiB(d), numa == null ? null : numa.intValue()));
                } else if ("mig".equals(type) && (d.getConsumesCounters() == null || d.getConsumesCounters().isEmpty())) {
                    migDevices.add(d);
                    migPools.add(pool);
                }
            }
        }
        Map<String, Integer> gpuByUuid = new HashMap<>();
        gpus.forEach(g -> {
            if (g.uuid() != null) {
                gpuByUuid.put(g.uuid(), g.index());
            }
        });
        List<Mig> migs = new ArrayList<>();
        for (int i = 0; i < migDevices.size(); i++) {
            Device d = migDevices.get(i);
            String parent = string(d, driver, "parentUUID");
            Integer gpu = parentIndex(d, driver, parent == null ? null : gpuByUuid.get(parent));
            if (gpu == null) {
                throw new IllegalArgumentException("node " + node + ": MIG device " + d.getName()
                        + " names no GPU (attribute parentIndex, a parentUUID of a GPU device, or a name gpu-<n>-mig-...)");
            }
            migs.add(new Mig(d.getName(), migPools.get(i), string(d, driver, "uuid"), string(d, driver, "profile"), parent, memoryMiB(d),
                    gpu, string(d, driver, "productName")));
        }
        gpus.sort(Comparator.comparingInt(Gpu::index));
        migs.sort(Comparator.comparing(Mig::device));
        for (int i = 1; i < gpus.size(); i++) {
            if (gpus.get(i).index() == gpus.get(i - 1).index()) {
                throw new IllegalArgumentException("node " + node + ": two GPU devices with index " + gpus.get(i).index() + " ("
                        + gpus.get(i - 1).device() + ", " + gpus.get(i).device() + ")");
            }
        }
        return new DriverDevices(List.copyOf(gpus), List.copyOf(migs));
    }

    /** MIG devices per profile ({@code 1g.10gb} -> 7), as {@code NodeInfo.mig} counts them. */
    public Map<String, Integer> migProfiles() {
        Map<String, Integer> profiles = new java.util.TreeMap<>();
        migs.forEach(m -> profiles.merge(m.profile() == null ? "unknown" : m.profile(), 1, Integer::sum));
        return profiles;
    }

    private static long generation(ResourceSlice s) {
        Long g = s.getSpec().getPool().getGeneration();
        return g == null ? 0 : g;
    }

    private static Integer index(Device d, String driver) {
        Long index = integer(d, driver, "index");
        if (index == null) {
            index = integer(d, driver, "minor");
        }
        if (index != null) {
            return Math.toIntExact(index);
        }
        Matcher m = GPU_NAME.matcher(d.getName() == null ? "" : d.getName());
        return m.matches() ? Integer.valueOf(m.group(1)) : null;
    }

    private static Integer parentIndex(Device d, String driver, Integer byUuid) {
        Long index = integer(d, driver, "parentIndex");
        if (index != null) {
            return Math.toIntExact(index);
        }
        if (byUuid != null) {
            return byUuid;
        }
        Matcher m = MIG_NAME.matcher(d.getName() == null ? "" : d.getName());
        return m.matches() ? Integer.valueOf(m.group(1)) : null;
    }

    /** The GPU indices of the node: its GPU devices and the GPUs in MIG mode its MIG devices are carved from, ascending. */
    public List<Integer> gpuIndices() {
        java.util.TreeSet<Integer> all = new java.util.TreeSet<>();
        gpus.forEach(g -> all.add(g.index()));
        migs.forEach(m -> all.add(m.gpu()));
        return List.copyOf(all);
    }

    private static DeviceAttribute attribute(Device d, String driver, String name) {
        Map<String, DeviceAttribute> attributes = d.getAttributes();
        if (attributes == null) {
            return null;
        }
        DeviceAttribute a = attributes.get(name);
        return a != null ? a : attributes.get(driver + "/" + name);
    }

    private static String string(Device d, String driver, String name) {
        DeviceAttribute a = attribute(d, driver, name);
        return a == null ? null : a.getString();
    }

    private static String version(Device d, String driver, String name) {
        DeviceAttribute a = attribute(d, driver, name);
        return a == null ? null : a.getVersion() != null ? a.getVersion() : a.getString();
    }

    private static Long integer(Device d, String driver, String name) {
        DeviceAttribute a = attribute(d, driver, name);
        return a == null ? null : a.getInt();
    }

    private static long memoryMiB(Device d) {
        DeviceCapacity c = d.getCapacity() == null ? null : d.getCapacity().get("memory");
        if (c == null || c.getValue() == null) {
            return 0;
        }
        BigDecimal bytes = Quantity.getAmountInBytes(c.getValue());
        return bytes.divide(BigDecimal.valueOf(1024L * 1024L), RoundingMode.DOWN).longValue();
    }
}
