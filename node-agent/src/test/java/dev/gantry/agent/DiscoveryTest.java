package dev.gantry.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class DiscoveryTest {

    @Test
    void parsesNvidiaSmiGpuQueryCsv() {
        String csv = """
                index, uuid, name, memory.total [MiB]
                0, GPU-1f2e3d4c-0000-1111-2222-333344445555, NVIDIA A100-SXM4-80GB, 81920 MiB
                1, GPU-1f2e3d4c-0000-1111-2222-333344445556, NVIDIA A100-SXM4-80GB, 81920 MiB
                """;
        assertThat(Discovery.parseGpus(csv)).containsExactly(
                new Discovery.Gpu(0, "GPU-1f2e3d4c-0000-1111-2222-333344445555", "NVIDIA A100-SXM4-80GB", 81920),
                new Discovery.Gpu(1, "GPU-1f2e3d4c-0000-1111-2222-333344445556", "NVIDIA A100-SXM4-80GB", 81920));
        assertThat(Discovery.modelOf("NVIDIA A100-SXM4-80GB")).isEqualTo("A100-SXM4-80GB");
        assertThat(Discovery.modelOf("Tesla V100 PCIE 32GB")).isEqualTo("Tesla-V100-PCIE-32GB");
        assertThatThrownBy(() -> Discovery.parseGpus("0, GPU-x")).isInstanceOf(IllegalArgumentException.class);
    }

    /**
     * On a host with GPUs: what the agent discovers is what {@code nvidia-smi} lists, read here with its own query
     * ({@code noheader}) and parsed apart from the agent's parser. Machines without a working {@code nvidia-smi} skip it.
     */
    @Test
    void discoveryMatchesTheRealNvidiaSmi() {
        String csv = Discovery.run("nvidia-smi", "--query-gpu=index,uuid,name,memory.total", "--format=csv,noheader");
        assumeTrue(csv != null && !csv.isBlank(),
                "no nvidia-smi answering on this machine: the agent's discovery is not checked against real GPUs here");
        List<Discovery.Gpu> listed = new ArrayList<>();
        for (String line : csv.strip().split("\\R")) {
            String[] field = line.split(",");
            String memory = field[3].strip(); // "81920 MiB"
            listed.add(new Discovery.Gpu(Integer.parseInt(field[0].strip()), field[1].strip(), field[2].strip(),
                    Long.parseLong(memory.substring(0, memory.indexOf(' ')))));
        }

        assertThat(Discovery.nvidiaSmiGpus()).containsExactlyElementsOf(listed);
        Discovery.Host host = Discovery.discover("1:NOT-USED");
        assertThat(host.simulated()).isFalse();
        assertThat(host.gpus()).isEqualTo(listed.size());
        assertThat(host.gpuModel()).isEqualTo(Discovery.modelOf(listed.getFirst().name()));
        assertThat(host.gpuMemoryMiB()).isEqualTo(listed.getFirst().memoryMiB());
        assertThat(host.topoMatrix()).as("nvidia-smi topo -m, for the inventory's parser").contains("GPU0");
    }

    @Test
    void migDevicesComeFromNvidiaSmiListingUnderTheirGpuAndGoToTheInventoryByUuid() {
        // nvidia-smi -L on an A100 host with MIG enabled on GPU 1 only (driver 535 spelling)
        String listing = """
                GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-1f2e3d4c-0000-1111-2222-333344445555)
                GPU 1: NVIDIA A100-SXM4-80GB (UUID: GPU-1f2e3d4c-0000-1111-2222-333344445556)
                  MIG 3g.40gb     Device  0: (UUID: MIG-5c9a2b3e-8f1d-5a7e-9b3c-2d4e6f8a1b2c)
                  MIG 1g.10gb     Device  1: (UUID: MIG-0a1b2c3d-4e5f-5a6b-8c7d-9e0f1a2b3c4d)
                  MIG 1g.10gb+me  Device  2: (UUID: MIG-9f8e7d6c-5b4a-5392-8170-6f5e4d3c2b1a)
                """;
        List<Discovery.MigDevice> migs = Discovery.parseMigDevices(listing);
        assertThat(migs).containsExactly(
                new Discovery.MigDevice(1, "3g.40gb", "MIG-5c9a2b3e-8f1d-5a7e-9b3c-2d4e6f8a1b2c"),
                new Discovery.MigDevice(1, "1g.10gb", "MIG-0a1b2c3d-4e5f-5a6b-8c7d-9e0f1a2b3c4d"),
                new Discovery.MigDevice(1, "1g.10gb+me", "MIG-9f8e7d6c-5b4a-5392-8170-6f5e4d3c2b1a"));
        assertThat(Discovery.parseMigDevices(listing.lines().limit(2).reduce("", (a, b) -> a + b + "\n"))).isEmpty();

        Discovery.Host host = new Discovery.Host("A100-SXM4-80GB", 2, 81920, null, 64000, 512000, false, migs);
        @SuppressWarnings("unchecked")
        Map<String, Object> mig = (Map<String, Object>) host.toNodeSpec(Map.of()).get("mig");
        assertThat(mig).containsEntry("strategy", "mixed");
        assertThat((List<?>) mig.get("devices")).first()
                .isEqualTo(Map.of("id", "MIG-5c9a2b3e-8f1d-5a7e-9b3c-2d4e6f8a1b2c", "gpu", 1, "profile", "3g.40gb"));
        assertThat(new Discovery.Host("A100-SXM4-80GB", 2, 81920, null, 64000, 512000, false).toNodeSpec(Map.of())).doesNotContainKey("mig");
    }

    @Test
    void simulatedGpusAreDeclaredAndMarkedSo() {
        Discovery.Host host = Discovery.simulated("8:A100", 16000, 65536);
        assertThat(host.gpus()).isEqualTo(8);
        assertThat(host.gpuModel()).isEqualTo("A100");
        assertThat(host.simulated()).isTrue();
        Map<String, Object> spec = host.toNodeSpec(Map.of("gantry.dev/address", "127.0.0.1"));
        // a simulated node is as large as its GPUs need (16 cores and 128 GiB a GPU), even on a 2-core machine
        assertThat(spec).containsEntry("gpus", 8).containsEntry("simulated", true).containsEntry("cpuMillis", 128_000L)
                .containsEntry("memoryMiB", 8 * 131_072L).doesNotContainKey("topoMatrix");
        assertThat(Discovery.simulated("1:A100", 512_000, 4_000_000).cpuMillis()).as("a larger host keeps its own").isEqualTo(512_000);
        assertThat(Discovery.simulated("2:H100:40960", 0, 0).gpuMemoryMiB()).isEqualTo(40960);
        for (String bad : List.of("8", "x:A100", "65:A100", "8:", "1:2:3:4")) {
            assertThatThrownBy(() -> Discovery.simulated(bad, 0, 0)).as(bad).isInstanceOf(IllegalArgumentException.class);
        }
    }

    @Test
    void optionsAreReadStrictly() {
        NodeAgent.Config c = NodeAgent.parse(new String[] {"--node", "n1", "--token-file", "/tmp/t", "--simulate=2:A100",
                "--placement", "http://127.0.0.1:19084", "--grace", "3s", "--work-dir", "/tmp/w"});
        assertThat(c.node()).isEqualTo("n1");
        assertThat(c.forceSimulate()).isTrue();
        assertThat(c.placement().getPort()).isEqualTo(19084);
        assertThat(c.defaultGrace().toSeconds()).isEqualTo(3);
        assertThat(c.workDir()).isEqualTo(Path.of("/tmp/w"));
        assertThatThrownBy(() -> NodeAgent.parse(new String[] {"--token-file", "/tmp/t", "--bogus", "1"}))
                .hasMessageContaining("--bogus");
        assertThatThrownBy(() -> NodeAgent.parse(new String[] {"--token-file", "/tmp/t", "--grace", "soon"}))
                .hasMessageContaining("grace");
    }
}
