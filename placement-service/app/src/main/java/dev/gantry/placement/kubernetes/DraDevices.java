package dev.gantry.placement.kubernetes;

import io.fabric8.kubernetes.api.model.resource.v1.Device;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceAttribute;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Where a node's GPUs are in the GPU driver's {@code ResourceSlice}s: GPU index -> the (driver, pool,
 * device) a claim's allocation names, and the way back. Pure. Indices are read as the inventory reads
 * them (node-inventory-service's {@code DriverDevices}: attribute {@code index}, else {@code minor}, else
 * the number in the name {@code gpu-<minor>}). A MIG device ({@code type} {@code mig}) is known by the id the
 * inventory gives it (its {@code uuid}, else its device name) and carries its {@code profile}; its place is the GPU
 * it is carved from: attribute {@code parentIndex}, else the GPU device its {@code parentUUID} names, else the number
 * in its name {@code gpu-<parent minor>-mig-...} (the driver publishes a GPU in MIG mode as its MIG devices only).
 * MIG devices that consume shared counters (dynamic MIG's possible partitions) are left out, as the inventory
 * leaves them out. Only the newest generation of a pool counts.
 */
public final class DraDevices {

    /** One device as a claim's allocation names it. */
    public record DeviceRef(String driver, String pool, String device) {
    }

    /** A device's place: its node and the index of its GPU there. */
    public record GpuPlace(String node, int index) {
    }

    /** A MIG device: the id the inventory knows it by, and its profile. */
    public record MigRef(String id, String profile) {
    }

    private static final Pattern GPU_NAME = Pattern.compile("^gpu-(\\d+)$");
    private static final Pattern MIG_NAME = Pattern.compile("^gpu-(\\d+)-mig-.+$");

    private final Map<String, Map<Integer, DeviceRef>> byNode;
    private final Map<DeviceRef, GpuPlace> places;
    private final Map<String, Map<String, DeviceRef>> migsByNode;
    private final Map<DeviceRef, MigRef> migs;

    private DraDevices(Map<String, Map<Integer, DeviceRef>> byNode, Map<DeviceRef, GpuPlace> places,
            Map<String, Map<String, DeviceRef>> migsByNode, Map<DeviceRef, MigRef> migs) {
        this.byNode = byNode;
        this.places = places;
        this.migsByNode = migsByNode;
        this.migs = migs;
    }

    /** The devices {@code driver} publishes in {@code slices} (slices of other drivers are left out). */
    public static DraDevices of(String driver, Collection<ResourceSlice> slices) {
        Map<String, Long> newest = new HashMap<>();
        for (ResourceSlice s : slices) {
            if (ours(driver, s)) {
                newest.merge(poolKey(s), generation(s), Math::max);
            }
        }
        Map<String, Map<Integer, DeviceRef>> byNode = new HashMap<>();
        Map<DeviceRef, GpuPlace> places = new HashMap<>();
        Map<String, GpuPlace> byUuid = new HashMap<>();
        Map<DeviceRef, Device> migDevices = new LinkedHashMap<>();
        Map<DeviceRef, String> migNodes = new HashMap<>();
        for (ResourceSlice s : slices) {
            if (!ours(driver, s) || generation(s) < newest.get(poolKey(s)) || s.getSpec().getDevices() == null) {
                continue;
            }
            String node = s.getSpec().getNodeName();
            String pool = s.getSpec().getPool().getName();
            for (Device d : s.getSpec().getDevices()) {
                DeviceRef ref = new DeviceRef(driver, pool, d.getName());
                String type = string(d, driver, "type");
                if ("gpu".equals(type)) {
                    Integer index = index(d, driver);
                    if (index == null) {
                        continue; // the inventory refuses such a node; nothing can be placed on it by index
                    }
                    GpuPlace place = new GpuPlace(node, index);
                    byNode.computeIfAbsent(node, k -> new HashMap<>()).put(index, ref);
                    places.put(ref, place);
                    String uuid = string(d, driver, "uuid");
                    if (uuid != null) {
                        byUuid.put(uuid, place);
                    }
                } else if ("mig".equals(type) && (d.getConsumesCounters() == null || d.getConsumesCounters().isEmpty())) {
                    migDevices.put(ref, d);
                    migNodes.put(ref, node);
                }
            }
        }
        Map<String, Map<String, DeviceRef>> migsByNode = new HashMap<>();
        Map<DeviceRef, MigRef> migs = new HashMap<>();
        migDevices.forEach((ref, d) -> {
            String node = migNodes.get(ref);
            String parent = string(d, driver, "parentUUID");
            DeviceAttribute parentIndex = attribute(d, driver, "parentIndex");
            GpuPlace place = parentIndex != null && parentIndex.getInt() != null ? new GpuPlace(node, Math.toIntExact(parentIndex.getInt()))
                    : parent != null && byUuid.containsKey(parent) ? byUuid.get(parent) : nameIndex(d.getName(), node);
            if (place != null) {
                places.put(ref, place);
            }
            String uuid = string(d, driver, "uuid");
            MigRef mig = new MigRef(uuid != null ? uuid : d.getName(), string(d, driver, "profile"));
            migs.put(ref, mig);
            migsByNode.computeIfAbsent(node, k -> new HashMap<>()).put(mig.id(), ref);
        });
        return new DraDevices(byNode, places, migsByNode, migs);
    }

    private static GpuPlace nameIndex(String name, String node) {
        Matcher m = MIG_NAME.matcher(name == null ? "" : name);
        return m.matches() ? new GpuPlace(node, Integer.parseInt(m.group(1))) : null;
    }

    /** The MIG device the inventory calls {@code id} on {@code node} (its UUID, else its device name), or null. */
    public DeviceRef mig(String node, String id) {
        Map<String, DeviceRef> onNode = migsByNode.get(node);
        return onNode == null ? null : onNode.get(id);
    }

    /** The id and profile of a MIG device, or null when the device is not a MIG device the driver publishes. */
    public MigRef migOf(DeviceRef device) {
        return migs.get(device);
    }

    /** The device of GPU {@code index} on {@code node}, or null when the driver publishes none. */
    public DeviceRef gpu(String node, int index) {
        Map<Integer, DeviceRef> gpus = byNode.get(node);
        return gpus == null ? null : gpus.get(index);
    }

    /** Which node and GPU a device is (a MIG device: its parent GPU), or null when unknown. */
    public GpuPlace place(DeviceRef device) {
        return places.get(device);
    }

    private static boolean ours(String driver, ResourceSlice s) {
        return s.getSpec() != null && driver.equals(s.getSpec().getDriver()) && s.getSpec().getNodeName() != null
                && s.getSpec().getPool() != null && s.getSpec().getPool().getName() != null;
    }

    private static String poolKey(ResourceSlice s) {
        return s.getSpec().getPool().getName();
    }

    private static long generation(ResourceSlice s) {
        Long g = s.getSpec().getPool().getGeneration();
        return g == null ? 0 : g;
    }

    private static Integer index(Device d, String driver) {
        DeviceAttribute index = attribute(d, driver, "index");
        if (index == null || index.getInt() == null) {
            index = attribute(d, driver, "minor");
        }
        if (index != null && index.getInt() != null) {
            return Math.toIntExact(index.getInt());
        }
        Matcher m = GPU_NAME.matcher(d.getName() == null ? "" : d.getName());
        return m.matches() ? Integer.valueOf(m.group(1)) : null;
    }

    private static DeviceAttribute attribute(Device d, String driver, String name) {
        if (d.getAttributes() == null) {
            return null;
        }
        DeviceAttribute a = d.getAttributes().get(name);
        return a != null ? a : d.getAttributes().get(driver + "/" + name);
    }

    private static String string(Device d, String driver, String name) {
        DeviceAttribute a = attribute(d, driver, name);
        return a == null ? null : a.getString();
    }
}
