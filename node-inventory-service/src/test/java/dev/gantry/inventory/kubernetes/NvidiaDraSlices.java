package dev.gantry.inventory.kubernetes;

import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.resource.v1.Device;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceAttribute;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceCapacity;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSliceBuilder;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * ResourceSlices shaped as NVIDIA's DRA driver for GPUs publishes them (NVIDIA/k8s-dra-driver-gpu,
 * {@code cmd/gpu-kubelet-plugin/deviceinfo.go} for a GPU's attributes and name {@code gpu-<minor>},
 * {@code mig.go} for a MIG device's attributes, capacity {@code memory} in bytes and its name
 * {@code gpu-<minor>-mig-<profile>-<profileId>-<placementStart>}, {@code driver.go} for one pool per node
 * named after the node). The newest driver publishes no {@code index} attribute; drivers up to 25.8 did
 * ({@code withIndex}).
 */
public final class NvidiaDraSlices {

    public static final String DRIVER = "gpu.nvidia.com";

    private NvidiaDraSlices() {
    }

    /** Eight H100 80GB, named by minor number; {@code withIndex}: also the older {@code index} attribute. */
    public static ResourceSlice h100Node(String node, boolean withIndex) {
        List<Device> devices = new ArrayList<>();
        for (int minor = 0; minor < 8; minor++) {
            devices.add(gpu(minor, withIndex ? minor : null, "NVIDIA H100 80GB HBM3", "9.0", 80L * 1024));
        }
        return slice(node, 1, devices);
    }

    /** A whole GPU as the driver announces it. */
    public static Device gpu(int minor, Integer index, String product, String computeCapability, long memoryMiB) {
        Map<String, DeviceAttribute> a = new LinkedHashMap<>();
        a.put("type", string("gpu"));
        a.put("uuid", string(String.format("GPU-%08x-1111-2222-3333-%012d", 0xa100 + minor, minor)));
        a.put("productName", string(product));
        a.put("brand", string("Nvidia"));
        a.put("architecture", string("Hopper"));
        a.put("cudaComputeCapability", version(computeCapability + ".0"));
        a.put("driverVersion", version("580.82.7"));
        a.put("cudaDriverVersion", version("13.0.0"));
        a.put("resource.kubernetes.io/pciBusID", string(String.format("0000:%02x:00.0", 0x18 + minor * 0x10)));
        if (index != null) {
            a.put("index", integer(index));
            a.put("minor", integer(minor));
        }
        return new DeviceBuilder().withName("gpu-" + minor).withAttributes(a)
                .withCapacity(Map.of("memory", new DeviceCapacity(null, new Quantity(memoryMiB * 1024 * 1024 + "")))).build();
    }

    /** A MIG device of the GPU with {@code parentMinor}. */
    public static Device mig(int parentMinor, String profile, int profileId, int placementStart, long memoryMiB) {
        Map<String, DeviceAttribute> a = new LinkedHashMap<>();
        a.put("type", string("mig"));
        a.put("uuid", string(String.format("MIG-%08x-aaaa-bbbb-cccc-%012d", parentMinor, placementStart)));
        a.put("parentUUID", string(String.format("GPU-%08x-1111-2222-3333-%012d", 0xa100 + parentMinor, parentMinor)));
        a.put("profile", string(profile));
        a.put("productName", string("NVIDIA A100-SXM4-80GB"));
        a.put("cudaComputeCapability", version("8.0.0"));
        String name = "gpu-" + parentMinor + "-mig-" + profile.replace(".", "") + "-" + profileId + "-" + placementStart;
        return new DeviceBuilder().withName(name).withAttributes(a)
                .withCapacity(Map.of("memory", new DeviceCapacity(null, new Quantity(memoryMiB * 1024 * 1024 + "")),
                        "multiprocessors", new DeviceCapacity(null, new Quantity("14"))))
                .build();
    }

    public static ResourceSlice slice(String node, long generation, List<Device> devices) {
        return new ResourceSliceBuilder()
                .withNewMetadata().withName(node + "-" + DRIVER + "-g" + generation).endMetadata()
                .withNewSpec().withDriver(DRIVER).withNodeName(node)
                .withNewPool().withName(node).withGeneration(generation).withResourceSliceCount(1L).endPool()
                .withDevices(devices).endSpec()
                .build();
    }

    private static DeviceAttribute string(String s) {
        return new DeviceAttribute(null, null, s, null);
    }

    private static DeviceAttribute version(String s) {
        return new DeviceAttribute(null, null, null, s);
    }

    private static DeviceAttribute integer(long i) {
        return new DeviceAttribute(null, i, null, null);
    }
}
