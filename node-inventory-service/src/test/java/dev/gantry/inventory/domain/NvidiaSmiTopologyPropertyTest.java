package dev.gantry.inventory.domain;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Deque;
import java.util.List;
import java.util.Random;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;

/**
 * Any matrix nvidia-smi could print (random NVLink graph, PCIe paths, NUMA placement) parses to the
 * islands a breadth-first search finds and to the NUMA groups it was built from.
 */
class NvidiaSmiTopologyPropertyTest {

    private static final String[] PCIE = {"PIX", "PXB", "PHB", "NODE", "SYS"};

    @Property(tries = 200)
    void islandsAreTheConnectedNvlinkComponents(@ForAll @IntRange(min = 1, max = 16) int gpus,
            @ForAll @IntRange(min = 0, max = 100) int nvlinkPercent, @ForAll @IntRange(min = 1, max = 4) int numaNodes,
            @ForAll long seed) {
        Random random = new Random(seed);
        String[][] links = new String[gpus][gpus];
        boolean[][] nv = new boolean[gpus][gpus];
        for (int a = 0; a < gpus; a++) {
            links[a][a] = " X ";
            for (int b = a + 1; b < gpus; b++) {
                nv[a][b] = nv[b][a] = random.nextInt(100) < nvlinkPercent;
                String link = nv[a][b] ? (random.nextBoolean() ? "NV" + (1 + random.nextInt(18)) : "NVS") : PCIE[random.nextInt(PCIE.length)];
                links[a][b] = links[b][a] = link;
            }
        }
        int[] numa = new int[gpus];
        for (int g = 0; g < gpus; g++) {
            numa[g] = g * numaNodes / gpus; // GPUs fill NUMA nodes in order, as on real boards
        }
        StringBuilder text = new StringBuilder();
        for (int g = 0; g < gpus; g++) {
            text.append("\tGPU").append(g);
        }
        text.append("\tCPU Affinity\tNUMA Affinity\n");
        for (int a = 0; a < gpus; a++) {
            text.append("GPU").append(a);
            for (int b = 0; b < gpus; b++) {
                text.append('\t').append(links[a][b]);
            }
            text.append('\t').append(numa[a] * 16).append('-').append(numa[a] * 16 + 15).append('\t').append(numa[a]).append('\n');
        }
        text.append("\nLegend:\n\n  X    = Self\n");

        NvidiaSmiTopology topo = NvidiaSmiTopology.parse(text.toString());

        assertThat(topo.gpus()).isEqualTo(gpus);
        assertThat(topo.nvlinkIslands()).isEqualTo(components(nv));
        List<List<Integer>> expectedNuma = new ArrayList<>();
        for (int g = 0; g < gpus; g++) {
            if (g == 0 || numa[g] != numa[g - 1]) {
                expectedNuma.add(new ArrayList<>());
            }
            expectedNuma.getLast().add(g);
        }
        assertThat(topo.numaNodes()).isEqualTo(expectedNuma);
        assertThat(GpuGroups.parse(GpuGroups.format(topo.nvlinkIslands()))).isEqualTo(topo.nvlinkIslands());
    }

    private static List<List<Integer>> components(boolean[][] nv) {
        int n = nv.length;
        boolean[] seen = new boolean[n];
        List<List<Integer>> result = new ArrayList<>();
        for (int start = 0; start < n; start++) {
            if (seen[start]) {
                continue;
            }
            List<Integer> component = new ArrayList<>();
            Deque<Integer> queue = new ArrayDeque<>(List.of(start));
            seen[start] = true;
            while (!queue.isEmpty()) {
                int g = queue.poll();
                component.add(g);
                for (int h = 0; h < n; h++) {
                    if (nv[g][h] && !seen[h]) {
                        seen[h] = true;
                        queue.add(h);
                    }
                }
            }
            component.sort(Comparator.naturalOrder());
            if (component.size() > 1) {
                result.add(component);
            }
        }
        return result;
    }
}
