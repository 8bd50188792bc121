package dev.gantry.inventory.kubernetes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.gantry.contracts.nodes.NodeInfo;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.Device;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSliceBuilder;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The NVIDIA DRA driver's ResourceSlices ({@link NvidiaDraSlices}) read as a node's GPUs and MIG devices. */
class DriverDevicesTest {

    private static final String DRIVER = NvidiaDraSlices.DRIVER;

    /** A node the device plugin describes differently (4 GPUs, A100 label), with islands and NUMA annotations. */
    private static Node labelled(String name) {
        return new NodeBuilder().withNewMetadata().withName(name)
                .addToLabels("nvidia.com/gpu.count", "4")
                .addToAnnotations("gantry.dev/nvlink-islands", "0-3;4-7")
                .addToAnnotations("gantry.dev/numa", "0-3;4-7")
                .endMetadata()
                .withNewStatus().addNewCondition().withType("Ready").withStatus("True").endCondition().endStatus()
                .build();
    }

    @Test
    void gpusOfTheNewestDriverAreIndexedByTheMinorInTheirName() {
        DriverDevices devices = DriverDevices.of(DRIVER, "h1", List.of(NvidiaDraSlices.h100Node("h1", false)));
        assertThat(devices.gpus()).extracting(DriverDevices.Gpu::index).containsExactly(0, 1, 2, 3, 4, 5, 6, 7);
        DriverDevices.Gpu first = devices.gpus().get(0);
        assertThat(first.device()).isEqualTo("gpu-0");
        assertThat(first.pool()).isEqualTo("h1");
        assertThat(first.uuid()).startsWith("GPU-");
        assertThat(first.productName()).isEqualTo("NVIDIA H100 80GB HBM3");
        assertThat(first.computeCapability()).isEqualTo("9.0.0");
        assertThat(first.memoryMiB()).isEqualTo(80 * 1024);
        assertThat(first.numa()).isNull();
    }

    @Test
    void theIndexAttributeWinsOverTheName() {
        List<Device> devices = new ArrayList<>();
        // older drivers: index and minor differ on some hosts; Gantry's indices are nvidia-smi's, so index wins
        devices.add(NvidiaDraSlices.gpu(1, 0, "NVIDIA A100-SXM4-80GB", "8.0", 81920));
        devices.add(NvidiaDraSlices.gpu(0, 1, "NVIDIA A100-SXM4-80GB", "8.0", 81920));
        DriverDevices d = DriverDevices.of(DRIVER, "a1", List.of(NvidiaDraSlices.slice("a1", 3, devices)));
        assertThat(d.gpus()).extracting(DriverDevices.Gpu::index, DriverDevices.Gpu::device)
                .containsExactly(org.assertj.core.groups.Tuple.tuple(0, "gpu-1"), org.assertj.core.groups.Tuple.tuple(1, "gpu-0"));
    }

    @Test
    void otherNodesOtherDriversAndOlderPoolGenerationsAreLeftOut() {
        ResourceSlice old = NvidiaDraSlices.slice("h1", 1, List.of(NvidiaDraSlices.gpu(0, null, "old", "9.0", 1)));
        ResourceSlice current = NvidiaDraSlices.slice("h1", 2, List.of(NvidiaDraSlices.gpu(0, null, "NVIDIA H100 80GB HBM3", "9.0", 81920)));
        ResourceSlice otherNode = NvidiaDraSlices.h100Node("h2", false);
        ResourceSlice otherDriver = new ResourceSliceBuilder(NvidiaDraSlices.h100Node("h1", false)).editSpec().withDriver("net.example.com")
                .endSpec().build();
        DriverDevices d = DriverDevices.of(DRIVER, "h1", List.of(old, current, otherNode, otherDriver));
        assertThat(d.gpus()).hasSize(1);
        assertThat(d.gpus().get(0).productName()).isEqualTo("NVIDIA H100 80GB HBM3");
    }

    @Test
    void migDevicesAreCountedByProfile() {
        List<Device> devices = new ArrayList<>();
        devices.add(NvidiaDraSlices.gpu(0, null, "NVIDIA A100-SXM4-80GB", "8.0", 81920));
        devices.add(NvidiaDraSlices.gpu(1, null, "NVIDIA A100-SXM4-80GB", "8.0", 81920));
        for (int start = 0; start < 7; start++) {
            devices.add(NvidiaDraSlices.mig(1, "1g.10gb", 19, start, 9856));
        }
        devices.add(NvidiaDraSlices.mig(0, "3g.40gb", 9, 4, 40192));
        DriverDevices d = DriverDevices.of(DRIVER, "a1", List.of(NvidiaDraSlices.slice("a1", 1, devices)));
        assertThat(d.gpus()).hasSize(2);
        assertThat(d.migs()).hasSize(8);
        assertThat(d.migs()).filteredOn(m -> m.device().equals("gpu-1-mig-1g10gb-19-0")).singleElement()
                .satisfies(m -> assertThat(m.memoryMiB()).isEqualTo(9856));
        assertThat(d.migProfiles()).isEqualTo(Map.of("1g.10gb", 7, "3g.40gb", 1));

        NodeInfo node = KubernetesNodeMapper.map(labelled("a1"), d);
        assertThat(node.mig().strategy()).isEqualTo("mixed");
        assertThat(node.mig().profiles()).isEqualTo(Map.of("1g.10gb", 7, "3g.40gb", 1));
        assertThat(node.mig().devices()).hasSize(8).filteredOn(m -> m.profile().equals("1g.10gb"))
                .allSatisfy(m -> assertThat(m.gpu()).as("the GPU its parentUUID names").isEqualTo(1))
                .allSatisfy(m -> assertThat(m.id()).startsWith("MIG-"));
    }

    @Test
    void aGpuInMigModeIsPublishedAsItsMigDevicesOnlyAndStillCountsAmongTheNodesGpus() {
        // the driver adds a MIG-enabled GPU's MIG devices instead of the GPU (nvlib.go, enumerateGpusAndMigDevices):
        // GPU 1 is in MIG mode (3g.40gb at placements 0 and 4), GPUs 0, 2 and 3 are whole
        List<Device> devices = new ArrayList<>();
        for (int minor : List.of(0, 2, 3)) {
            devices.add(NvidiaDraSlices.gpu(minor, null, "NVIDIA A100-SXM4-80GB", "8.0", 81920));
        }
        devices.add(NvidiaDraSlices.mig(1, "3g.40gb", 9, 0, 40192));
        devices.add(NvidiaDraSlices.mig(1, "3g.40gb", 9, 4, 40192));
        DriverDevices d = DriverDevices.of(DRIVER, "a1", List.of(NvidiaDraSlices.slice("a1", 1, devices)));
        assertThat(d.migs()).extracting(DriverDevices.Mig::gpu).as("the parent's minor from the name: no GPU device names it").containsOnly(1);
        assertThat(d.gpuIndices()).containsExactly(0, 1, 2, 3);

        NodeInfo node = KubernetesNodeMapper.map(labelled("a1"), d);
        assertThat(node.gpus()).isEqualTo(4);
        assertThat(node.mig().devices()).containsExactly(
                new NodeInfo.MigDevice("MIG-00000001-aaaa-bbbb-cccc-000000000000", 1, "3g.40gb", "gpu-1-mig-3g40gb-9-0"),
                new NodeInfo.MigDevice("MIG-00000001-aaaa-bbbb-cccc-000000000004", 1, "3g.40gb", "gpu-1-mig-3g40gb-9-4"));
    }

    @Test
    void theParentIndexAttributeOfOlderDriversWinsAndDynamicMigPartitionsAreLeftOut() {
        List<Device> devices = new ArrayList<>();
        devices.add(NvidiaDraSlices.gpu(0, 1, "NVIDIA A100-SXM4-80GB", "8.0", 81920));
        Device older = NvidiaDraSlices.mig(1, "1g.10gb", 19, 0, 9856); // named by minor 1, index 0 (25.3 published parentIndex)
        older.getAttributes().put("parentIndex", new io.fabric8.kubernetes.api.model.resource.v1.DeviceAttribute(null, 0L, null, null));
        devices.add(older);
        Device possible = NvidiaDraSlices.mig(0, "1g.10gb", 19, 1, 9856);
        possible.setConsumesCounters(List.of(new io.fabric8.kubernetes.api.model.resource.v1.DeviceCounterConsumption("gpu-0-counter-set", Map.of())));
        devices.add(possible);
        DriverDevices d = DriverDevices.of(DRIVER, "a1", List.of(NvidiaDraSlices.slice("a1", 1, devices)));
        assertThat(d.migs()).singleElement().satisfies(m -> {
            assertThat(m.device()).isEqualTo("gpu-1-mig-1g10gb-19-0");
            assertThat(m.gpu()).isZero();
        });
    }

    @Test
    void theSlicesWinOverTheDevicePluginLabelsAndTheAnnotationsKeepTheIslands() {
        NodeInfo node = KubernetesNodeMapper.map(labelled("h1"), DriverDevices.of(DRIVER, "h1", List.of(NvidiaDraSlices.h100Node("h1", false))));
        assertThat(node.gpus()).isEqualTo(8);
        assertThat(node.gpuModel()).as("GFD's spelling of productName").isEqualTo("NVIDIA-H100-80GB-HBM3");
        assertThat(node.gpuMemoryMiB()).isEqualTo(80 * 1024);
        assertThat(node.gpuSharing()).as("the driver shares a GPU through a claim's configuration").isTrue();
        assertThat(node.nvlinkIslands()).containsExactly(List.of(0, 1, 2, 3), List.of(4, 5, 6, 7));
        assertThat(node.numaNodes()).containsExactly(List.of(0, 1, 2, 3), List.of(4, 5, 6, 7));

        NodeInfo withoutSlices = KubernetesNodeMapper.map(labelled("h1"), DriverDevices.NONE);
        assertThat(withoutSlices.gpus()).as("no slices: the device plugin's labels").isEqualTo(4);
        assertThat(withoutSlices.gpuSharing()).isFalse();
    }

    @Test
    void numaComesFromTheNumaAttributeWhenEveryGpuHasOne() {
        List<Device> devices = new ArrayList<>();
        for (int minor = 0; minor < 4; minor++) {
            Device gpu = NvidiaDraSlices.gpu(minor, null, "NVIDIA L40S", "8.9", 46068);
            gpu.getAttributes().put("numa", new io.fabric8.kubernetes.api.model.resource.v1.DeviceAttribute(null, (long) (minor % 2), null, null));
            devices.add(gpu);
        }
        Node node = new NodeBuilder().withNewMetadata().withName("l1").endMetadata().build();
        NodeInfo info = KubernetesNodeMapper.map(node, DriverDevices.of(DRIVER, "l1", List.of(NvidiaDraSlices.slice("l1", 1, devices))));
        assertThat(info.numaNodes()).containsExactly(List.of(0, 2), List.of(1, 3));
    }

    @Test
    void gpuIndicesWithAGapOrTwiceAreRefused() {
        List<Device> gap = List.of(NvidiaDraSlices.gpu(0, null, "X", "9.0", 1), NvidiaDraSlices.gpu(2, null, "X", "9.0", 1));
        assertThatThrownBy(() -> KubernetesNodeMapper.map(labelled("g"), DriverDevices.of(DRIVER, "g", List.of(NvidiaDraSlices.slice("g", 1, gap)))))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("not 0..1");
        List<Device> twice = List.of(NvidiaDraSlices.gpu(0, 0, "X", "9.0", 1), NvidiaDraSlices.gpu(1, 0, "X", "9.0", 1));
        assertThatThrownBy(() -> DriverDevices.of(DRIVER, "g", List.of(NvidiaDraSlices.slice("g", 1, twice))))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("two GPU devices with index 0");
    }
}
