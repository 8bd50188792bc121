package dev.gantry.inventory.kubernetes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.gantry.contracts.nodes.NodeInfo;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Node → NodeInfo without an API server. */
public class KubernetesNodeMapperTest {

    /** A DGX A100 as GPU Feature Discovery and the device plugin label it, with Gantry's annotations. */
    public static Node dgxA100(String name) {
        return new NodeBuilder()
                .withNewMetadata().withName(name)
                .addToLabels("nvidia.com/gpu.product", "NVIDIA-A100-SXM4-80GB")
                .addToLabels("nvidia.com/gpu.count", "8")
                .addToLabels("nvidia.com/gpu.memory", "81920")
                .addToLabels("nvidia.com/mig.strategy", "mixed")
                .addToLabels("topology.kubernetes.io/zone", "z1")
                .addToAnnotations("gantry.dev/nvlink-islands", "0-7")
                .addToAnnotations("gantry.dev/numa", "0-3;4-7")
                .addToAnnotations("gantry.dev/ib-fabric", "ib-a")
                .addToAnnotations("gantry.dev/ib-hcas", "8")
                .addToAnnotations("gantry.dev/spine", "sp1")
                .addToAnnotations("gantry.dev/leaf", "lf1")
                .endMetadata()
                .withNewSpec()
                .addNewTaint().withKey("nvidia.com/gpu").withValue("present").withEffect("NoSchedule").endTaint()
                .endSpec()
                .withNewStatus()
                .addToAllocatable("cpu", new Quantity("255500m"))
                .addToAllocatable("memory", new Quantity("2063425Mi"))
                .addToAllocatable("nvidia.com/gpu", new Quantity("6"))
                .addToAllocatable("nvidia.com/mig-3g.40gb", new Quantity("2"))
                .addToAllocatable("pods", new Quantity("110"))
                .addNewCondition().withType("Ready").withStatus("True").withLastHeartbeatTime("2026-12-02T10:00:00Z").endCondition()
                .endStatus()
                .build();
    }

    @Test
    void mapsGfdLabelsAllocatableTaintsConditionAndAnnotations() {
        NodeInfo node = KubernetesNodeMapper.map(dgxA100("dgx-01"));
        assertThat(node.name()).isEqualTo("dgx-01");
        assertThat(node.gpuModel()).isEqualTo("NVIDIA-A100-SXM4-80GB");
        assertThat(node.gpus()).as("the GFD count wins over allocatable (MIG slices take 2 GPUs)").isEqualTo(8);
        assertThat(node.gpuMemoryMiB()).isEqualTo(81920);
        assertThat(node.cpuMillis()).isEqualTo(255_500);
        assertThat(node.memoryMiB()).isEqualTo(2_063_425);
        assertThat(node.nvlinkIslands()).containsExactly(List.of(0, 1, 2, 3, 4, 5, 6, 7));
        assertThat(node.numaNodes()).containsExactly(List.of(0, 1, 2, 3), List.of(4, 5, 6, 7));
        assertThat(node.topology()).isEqualTo(new NodeInfo.Topology("z1", "sp1", "lf1"));
        assertThat(node.ibFabric()).isEqualTo("ib-a");
        assertThat(node.ibHcas()).isEqualTo(8);
        assertThat(node.mig()).isEqualTo(new NodeInfo.Mig("mixed", Map.of("3g.40gb", 2), List.of(
                new NodeInfo.MigDevice("mig-3g.40gb-0", 6, "3g.40gb", null), new NodeInfo.MigDevice("mig-3g.40gb-1", 7, "3g.40gb", null))));
        assertThat(node.taints()).containsExactly(new NodeInfo.Taint("nvidia.com/gpu", "present", "NoSchedule"));
        assertThat(node.labels()).containsEntry("topology.kubernetes.io/zone", "z1");
        assertThat(node.schedulable()).isTrue();
        assertThat(node.gpuSharing()).isFalse();
        assertThat(node.health()).isEqualTo(NodeInfo.Health.READY);
        assertThat(node.lastHeartbeat()).isEqualTo(Instant.parse("2026-12-02T10:00:00Z"));
    }

    @Test
    void withoutGfdTheCountComesFromAllocatableDividedByTimeSlicingReplicas() {
        Node node = new NodeBuilder().withNewMetadata().withName("t4-01")
                .addToLabels("nvidia.com/gpu.replicas", "4")
                .addToLabels("nvidia.com/gpu.product", "Tesla-T4").endMetadata()
                .withNewSpec().withUnschedulable(true).endSpec()
                .withNewStatus().addToAllocatable("nvidia.com/gpu", new Quantity("16")).addToAllocatable("cpu", new Quantity("32"))
                .addToAllocatable("memory", new Quantity("128Gi"))
                .addNewCondition().withType("Ready").withStatus("Unknown").endCondition().endStatus()
                .build();
        NodeInfo info = KubernetesNodeMapper.map(node);
        assertThat(info.gpus()).isEqualTo(4);
        assertThat(info.gpuSharing()).isTrue();
        assertThat(info.cpuMillis()).isEqualTo(32_000);
        assertThat(info.memoryMiB()).isEqualTo(131_072);
        assertThat(info.schedulable()).as("spec.unschedulable: cordoned in Kubernetes").isFalse();
        assertThat(info.health()).isEqualTo(NodeInfo.Health.UNKNOWN);
        assertThat(info.mig()).isNull();
        assertThat(info.topology()).isEqualTo(NodeInfo.Topology.UNKNOWN);
    }

    @Test
    void aBareNodeWithoutStatusIsUnknownWithNoGpus() {
        NodeInfo info = KubernetesNodeMapper.map(new NodeBuilder().withNewMetadata().withName("cpu-01").endMetadata().build());
        assertThat(info.gpus()).isZero();
        assertThat(info.health()).isEqualTo(NodeInfo.Health.UNKNOWN);
        assertThat(info.schedulable()).isTrue();
    }

    @Test
    void theDevicePluginsMigCountsAreLaidOutOnTheGpusInMigModeForBookkeeping() {
        Node node = dgxA100("dgx-04");
        // mixed strategy: 6 whole GPUs allocatable of GFD's 8, so GPUs 6 and 7 are in MIG mode; "+me" is ".me" in a resource name
        node.getStatus().getAllocatable().put("nvidia.com/mig-1g.10gb", new Quantity("7"));
        node.getStatus().getAllocatable().put("nvidia.com/mig-1g.10gb.me", new Quantity("1"));
        NodeInfo info = KubernetesNodeMapper.map(node);
        assertThat(info.mig().profiles()).isEqualTo(Map.of("3g.40gb", 2, "1g.10gb", 7, "1g.10gb+me", 1));
        assertThat(info.mig().devices()).hasSize(10).allSatisfy(d -> assertThat(d.gpu()).isIn(6, 7));
        Map<Integer, Integer> slices = new java.util.TreeMap<>();
        info.mig().devices().forEach(d -> slices.merge(d.gpu(), dev.gantry.contracts.resources.MigProfile.slices(d.profile()), Integer::sum));
        assertThat(slices).as("no GPU holds more than its seven slices").isEqualTo(Map.of(6, 7, 7, 7));
        assertThat(info.mig().devices()).extracting(NodeInfo.MigDevice::id).doesNotHaveDuplicates().contains("mig-1g.10gb+me-0");

        Node noCount = dgxA100("dgx-05");
        noCount.getMetadata().getLabels().remove("nvidia.com/gpu.count");
        assertThat(KubernetesNodeMapper.map(noCount).mig().devices()).as("without GFD's count the GPUs in MIG mode are unknown").isEmpty();
    }

    @Test
    void aBadAnnotationIsNamed() {
        Node node = dgxA100("dgx-02");
        node.getMetadata().getAnnotations().put("gantry.dev/nvlink-islands", "0-3;x");
        assertThatThrownBy(() -> KubernetesNodeMapper.map(node)).hasMessageContaining("gantry.dev/nvlink-islands");
        Node badCount = dgxA100("dgx-03");
        badCount.getMetadata().getLabels().put("nvidia.com/gpu.count", "eight");
        assertThatThrownBy(() -> KubernetesNodeMapper.map(badCount)).hasMessageContaining("nvidia.com/gpu.count");
    }
}
