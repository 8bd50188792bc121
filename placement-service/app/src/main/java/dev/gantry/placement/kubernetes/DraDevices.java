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
 * the number in the name {@code gpu-<minor>}); a MIG device ({@code type} {@code mig}) counts as the GPU its
 * {@code parentUUID} names, so a MIG slice someone else holds occupies its whole GPU for Gantry.
 * Only the newest generation of a pool counts.
 */
public final class DraDevices {

    /** One device as a claim's allocation names it. */
    public record DeviceRef(String driver, String pool, String device) {
    }

    /** A device's place: its node and the index of its GPU there. */
    public record GpuPlace(String node, int index) {
    }

    private static final Pattern GPU_NAME = Pattern.compile("^gpu-(\\d+)$");

    private final Map<String, Map<Integer, DeviceRef>> byNode;
    private final Map<DeviceRef, GpuPlace> places;

    private DraDevices(Map<String, Map<Integer, DeviceRef>> byNode, Map<DeviceRef, GpuPlace> places) {
        this.byNode = byNode;
        this.places = places;
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
        Map<DeviceRef, String> migParents = new LinkedHashMap<>();
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
                } else if ("mig".equals(type)) {
                    migParents.put(ref, string(d, driver, "parentUUID"));
                }
            }
        }
        migParents.forEach((ref, parent) -> {
            GpuPlace place = parent == null ? null : byUuid.get(parent);
            if (place != null) {
                places.put(ref, place);
            }
        });
        return new DraDevices(byNode, places);
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
