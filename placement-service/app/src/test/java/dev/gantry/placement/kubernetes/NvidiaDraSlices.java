package dev.gantry.placement.kubernetes;

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
 * A node's ResourceSlice shaped as NVIDIA's DRA driver for GPUs publishes it (NVIDIA/k8s-dra-driver-gpu:
 * {@code cmd/gpu-kubelet-plugin/deviceinfo.go} for a GPU's attributes {@code type}, {@code uuid},
 * {@code productName}, {@code cudaComputeCapability}... and its name {@code gpu-<minor>}; {@code mig.go} for a MIG
 * device ({@code type: mig}, {@code parentUUID}, {@code profile}, name {@code gpu-<minor>-mig-<profile>-<id>-<start>};
 * a GPU in MIG mode is published as its MIG devices only, {@code nvlib.go}: {@link #migNode});
 * {@code driver.go} for the pool named after the node). Here GPU {@code i} has minor {@code 7 - i} and carries the
 * {@code index} attribute drivers up to 25.8 published, so a claim naming devices by index can be told apart
 * from one naming them by minor.
 */
final class NvidiaDraSlices {

    static final String DRIVER = "gpu.nvidia.com";

    private NvidiaDraSlices() {
    }

    static String deviceOf(int index) {
        return "gpu-" + (7 - index);
    }

    static String uuidOf(String node, int index) {
        return "GPU-" + Integer.toHexString(Math.abs(node.hashCode())) + "-0000-0000-0000-00000000000" + index;
    }

    /** Eight H100 GPUs and one MIG device ({@code 1g.10gb}) announced on GPU 5. */
    static ResourceSlice eightGpus(String node) {
        List<Device> devices = new ArrayList<>();
        for (int index = 0; index < 8; index++) {
            Map<String, DeviceAttribute> a = new LinkedHashMap<>();
            a.put("type", new DeviceAttribute(null, null, "gpu", null));
            a.put("uuid", new DeviceAttribute(null, null, uuidOf(node, index), null));
            a.put("productName", new DeviceAttribute(null, null, "NVIDIA H100 80GB HBM3", null));
            a.put("cudaComputeCapability", new DeviceAttribute(null, null, null, "9.0.0"));
            a.put("index", new DeviceAttribute(null, (long) index, null, null));
            a.put("minor", new DeviceAttribute(null, (long) (7 - index), null, null));
            devices.add(new DeviceBuilder().withName(deviceOf(index)).withAttributes(a)
                    .withCapacity(Map.of("memory", new DeviceCapacity(null, new Quantity("80Gi")))).build());
        }
        Map<String, DeviceAttribute> mig = new LinkedHashMap<>();
        mig.put("type", new DeviceAttribute(null, null, "mig", null));
        mig.put("uuid", new DeviceAttribute(null, null, "MIG-" + node + "-5-0", null));
        mig.put("parentUUID", new DeviceAttribute(null, null, uuidOf(node, 5), null));
        mig.put("profile", new DeviceAttribute(null, null, "1g.10gb", null));
        devices.add(new DeviceBuilder().withName(deviceOf(5) + "-mig-1g10gb-19-0").withAttributes(mig)
                .withCapacity(Map.of("memory", new DeviceCapacity(null, new Quantity("9856Mi")))).build());
        return slice(node, devices);
    }

    private static ResourceSlice slice(String node, List<Device> devices) {
        return new ResourceSliceBuilder()
                .withNewMetadata().withName(node + "-gpu.nvidia.com").endMetadata()
                .withNewSpec().withDriver(DRIVER).withNodeName(node)
                .withNewPool().withName(node).withGeneration(1L).withResourceSliceCount(1L).endPool()
                .withDevices(devices).endSpec()
                .build();
    }

    /** The UUID of MIG device {@code start} on GPU {@code gpu} of the node (the driver's attribute {@code uuid}). */
    static String migUuidOf(String node, int gpu, int start) {
        return "MIG-" + Integer.toHexString(Math.abs(node.hashCode())) + "-" + gpu + "-" + start;
    }

    /** The device name the newest driver gives a MIG device ({@code mig.go}: gpu-<parent minor>-mig-<profile>-<profile id>-<start>). */
    static String migDeviceOf(int gpu, String profile, int profileId, int start) {
        return "gpu-" + gpu + "-mig-" + profile.replace(".", "") + "-" + profileId + "-" + start;
    }

    /**
     * Four A100 80GB as the newest driver publishes them with MIG enabled on two of them: GPUs 0 and 1 whole
     * ({@code gpu-0}, {@code gpu-1}, named by minor, no index attribute); GPU 2 in MIG mode as two 3g.40gb devices
     * (placements 0 and 4) and GPU 3 as seven 1g.10gb devices. A GPU in MIG mode is not published as a GPU device
     * ({@code nvlib.go}: its MIG devices are added instead), so GPUs 2 and 3 appear only as their MIG devices' parents.
     */
    static ResourceSlice migNode(String node) {
        List<Device> devices = new ArrayList<>();
        for (int minor = 0; minor < 2; minor++) {
            Map<String, DeviceAttribute> a = new LinkedHashMap<>();
            a.put("type", new DeviceAttribute(null, null, "gpu", null));
            a.put("uuid", new DeviceAttribute(null, null, uuidOf(node, minor), null));
            a.put("productName", new DeviceAttribute(null, null, "NVIDIA A100-SXM4-80GB", null));
            devices.add(new DeviceBuilder().withName("gpu-" + minor).withAttributes(a)
                    .withCapacity(Map.of("memory", new DeviceCapacity(null, new Quantity("80Gi")))).build());
        }
        for (int start : List.of(0, 4)) {
            devices.add(mig(node, 2, "3g.40gb", 9, start, "40192Mi"));
        }
        for (int start = 0; start < 7; start++) {
            devices.add(mig(node, 3, "1g.10gb", 19, start, "9856Mi"));
        }
        return slice(node, devices);
    }

    private static Device mig(String node, int gpu, String profile, int profileId, int start, String memory) {
        Map<String, DeviceAttribute> a = new LinkedHashMap<>();
        a.put("type", new DeviceAttribute(null, null, "mig", null));
        a.put("uuid", new DeviceAttribute(null, null, migUuidOf(node, gpu, start), null));
        a.put("parentUUID", new DeviceAttribute(null, null, uuidOf(node, gpu), null));
        a.put("profile", new DeviceAttribute(null, null, profile, null));
        a.put("productName", new DeviceAttribute(null, null, "NVIDIA A100-SXM4-80GB", null));
        return new DeviceBuilder().withName(migDeviceOf(gpu, profile, profileId, start)).withAttributes(a)
                .withCapacity(Map.of("memory", new DeviceCapacity(null, new Quantity(memory)))).build();
    }
}
