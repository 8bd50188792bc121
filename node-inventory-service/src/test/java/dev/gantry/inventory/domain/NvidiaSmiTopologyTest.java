package dev.gantry.inventory.domain;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/** nvidia-smi topo -m of four real machine shapes (test resources under topo/), and matrices that do not parse. */
public class NvidiaSmiTopologyTest {

    public static String matrix(String name) {
        try (InputStream in = NvidiaSmiTopologyTest.class.getResourceAsStream("/topo/" + name)) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    @Test
    void dgxA100NvSwitchIsOneIslandWithFourNumaNodesAndTenNics() {
        NvidiaSmiTopology topo = NvidiaSmiTopology.parse(matrix("dgx-a100.txt"));
        assertThat(topo.gpus()).isEqualTo(8);
        assertThat(topo.nvlinkIslands()).containsExactly(List.of(0, 1, 2, 3, 4, 5, 6, 7));
        assertThat(topo.numaNodes()).containsExactly(List.of(0, 1), List.of(2, 3), List.of(4, 5), List.of(6, 7));
        assertThat(topo.nics()).isEqualTo(10);
    }

    @Test
    void dgx1HybridCubeMeshIsOneConnectedIslandAndNumaComesFromCpuAffinity() {
        NvidiaSmiTopology topo = NvidiaSmiTopology.parse(matrix("dgx1-v100.txt"));
        assertThat(topo.gpus()).isEqualTo(8);
        assertThat(topo.nvlinkIslands()).containsExactly(List.of(0, 1, 2, 3, 4, 5, 6, 7));
        assertThat(topo.numaNodes()).containsExactly(List.of(0, 1, 2, 3), List.of(4, 5, 6, 7));
        assertThat(topo.nics()).isZero();
    }

    @Test
    void pcieServerWithNvlinkBridgesHasFourPairs() {
        NvidiaSmiTopology topo = NvidiaSmiTopology.parse(matrix("pcie-nvlink-pairs.txt"));
        assertThat(topo.nvlinkIslands()).containsExactly(List.of(0, 1), List.of(2, 3), List.of(4, 5), List.of(6, 7));
        assertThat(topo.numaNodes()).containsExactly(List.of(0, 1, 2, 3), List.of(4, 5, 6, 7));
        assertThat(topo.nics()).isEqualTo(1);
    }

    @Test
    void workstationWithoutNvlinkHasNoIslandAndOneNumaNode() {
        NvidiaSmiTopology topo = NvidiaSmiTopology.parse(matrix("workstation-4gpu.txt"));
        assertThat(topo.gpus()).isEqualTo(4);
        assertThat(topo.nvlinkIslands()).isEmpty();
        assertThat(topo.numaNodes()).containsExactly(List.of(0, 1, 2, 3));
    }

    @Test
    void aSplitNvlinkMeshGivesTwoIslandsAndALoneGpuNone() {
        String text = """
                \tGPU0\tGPU1\tGPU2\tGPU3\tGPU4\tCPU Affinity\tNUMA Affinity
                GPU0\t X \tNV2\tSYS\tSYS\tSYS\t0-7\tN/A
                GPU1\tNV2\t X \tSYS\tSYS\tSYS\t0-7\tN/A
                GPU2\tSYS\tSYS\t X \tNVS\tSYS\t8-15\tN/A
                GPU3\tSYS\tSYS\tNVS\t X \tSYS\t8-15\tN/A
                GPU4\tSYS\tSYS\tSYS\tSYS\t X \t8-15\tN/A
                """;
        NvidiaSmiTopology topo = NvidiaSmiTopology.parse(text);
        assertThat(topo.nvlinkIslands()).containsExactly(List.of(0, 1), List.of(2, 3));
        assertThat(topo.numaNodes()).as("NUMA is N/A: grouped by CPU affinity").containsExactly(List.of(0, 1), List.of(2, 3, 4));
    }

    @Test
    void matricesThatDoNotParseSayWhy() {
        assertThatThrownBy(() -> NvidiaSmiTopology.parse("")).hasMessageContaining("empty");
        assertThatThrownBy(() -> NvidiaSmiTopology.parse("hello\nworld")).hasMessageContaining("no header line");
        String good = matrix("workstation-4gpu.txt");
        assertThatThrownBy(() -> NvidiaSmiTopology.parse(good.replaceFirst("PHB", "FOO")))
                .hasMessageContaining("line 2").hasMessageContaining("unknown link 'FOO'");
        assertThatThrownBy(() -> NvidiaSmiTopology.parse(good.replaceFirst("(?m)^(GPU3\\tPHB\\tPHB\\tPHB\\t) X ", "$1PHB")))
                .hasMessageContaining("GPU3 to GPU3 must be X");
        assertThatThrownBy(() -> NvidiaSmiTopology.parse(good.replaceFirst("(?m)^GPU2.*\\n", "")))
                .hasMessageContaining("no row for GPU2");
        assertThatThrownBy(() -> NvidiaSmiTopology.parse(good.replaceFirst("(?m)^GPU1\\tPHB\\t X \\tPHB\\tPHB", "GPU1\tPHB\t X \tPHB")))
                .hasMessageContaining("line 3: GPU1 to GPU3");
        assertThatThrownBy(() -> NvidiaSmiTopology.parse(good.replaceFirst("GPU0\t X \tPHB", "GPU0\t X \tNV4")))
                .hasMessageContaining("symmetric");
    }
}
