package dev.gantry.inventory.domain;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Pattern;

/**
 * What the text of {@code nvidia-smi topo -m} says about a node's GPUs.
 *
 * <p>Islands are the connected components of the NVLink graph ({@code NV#}, {@code NVS}/{@code NVSwitch}
 * links; {@code PIX}, {@code PXB}, {@code PHB}, {@code NODE}, {@code SYS} are PCIe paths): a GPU with
 * no NVLink is in no island. NUMA groups come from the {@code NUMA Affinity} column, or from
 * {@code CPU Affinity} when the driver prints no NUMA column (older drivers) or only {@code N/A}.
 *
 * @param gpus          GPU rows (GPU0..GPUn-1)
 * @param nvlinkIslands connected NVLink components of two or more GPUs, ordered by their lowest GPU
 * @param numaNodes     GPUs grouped by NUMA (or CPU) affinity, ordered by their lowest GPU; empty if unknown
 * @param nics          NIC columns (mlx5_*, NIC#): a hint for the InfiniBand HCA count
 */
public record NvidiaSmiTopology(int gpus, List<List<Integer>> nvlinkIslands, List<List<Integer>> numaNodes, int nics) {

    private static final Pattern GPU = Pattern.compile("GPU(\\d+)");
    private static final Pattern NVLINK = Pattern.compile("NV\\d+|NVS|NVSwitch");
    private static final Pattern PCIE = Pattern.compile("PIX|PXB|PHB|NODE|SYS|SOC");

    /** Parses the matrix; throws {@link IllegalArgumentException} naming the line that is wrong. */
    public static NvidiaSmiTopology parse(String text) {
        if (text == null || text.isBlank()) {
            throw new IllegalArgumentException("is empty");
        }
        String[] lines = text.split("\\R");
        int headerLine = -1;
        for (int i = 0; i < lines.length; i++) {
            String[] tokens = lines[i].trim().split("\\s+");
            if (tokens.length >= 1 && tokens[0].equals("GPU0") && (tokens.length == 1 || !tokens[1].equals("X"))) {
                headerLine = i;
                break;
            }
        }
        if (headerLine < 0) {
            throw new IllegalArgumentException("no header line starting with GPU0 (is this the output of nvidia-smi topo -m?)");
        }
        String[] header = lines[headerLine].trim().split("\\s+");
        List<String> devices = new ArrayList<>();
        int h = 0;
        while (h < header.length && !header[h].equals("CPU")) {
            devices.add(header[h++]);
        }
        String affinityHeader = String.join(" ", java.util.Arrays.copyOfRange(header, h, header.length));
        boolean hasCpu = affinityHeader.startsWith("CPU Affinity");
        boolean hasNuma = affinityHeader.contains("NUMA Affinity");
        int gpus = 0;
        while (gpus < devices.size() && devices.get(gpus).equals("GPU" + gpus)) {
            gpus++;
        }
        for (int d = gpus; d < devices.size(); d++) {
            if (GPU.matcher(devices.get(d)).matches()) {
                throw new IllegalArgumentException("line " + (headerLine + 1) + ": column " + devices.get(d)
                        + " is out of order (GPU columns must be GPU0, GPU1, ... before any NIC)");
            }
        }
        int nics = devices.size() - gpus;

        String[][] links = new String[gpus][];
        String[] cpuAffinity = new String[gpus];
        String[] numaAffinity = new String[gpus];
        for (int i = headerLine + 1; i < lines.length; i++) {
            String line = lines[i].trim();
            if (line.startsWith("Legend") || line.startsWith("NIC Legend")) {
                break;
            }
            if (line.isEmpty()) {
                continue;
            }
            String[] tokens = line.split("\\s+");
            var gpu = GPU.matcher(tokens[0]);
            if (!gpu.matches()) {
                if (devices.contains(tokens[0])) {
                    continue; // a NIC row: its links are the transposed NIC columns of the GPU rows
                }
                throw new IllegalArgumentException("line " + (i + 1) + ": '" + tokens[0] + "' is not a device of the header");
            }
            int g = Integer.parseInt(gpu.group(1));
            if (g >= gpus) {
                throw new IllegalArgumentException("line " + (i + 1) + ": GPU" + g + " has no column in the header");
            }
            if (links[g] != null) {
                throw new IllegalArgumentException("line " + (i + 1) + ": GPU" + g + " appears twice");
            }
            if (tokens.length < 1 + devices.size()) {
                throw new IllegalArgumentException("line " + (i + 1) + ": GPU" + g + " has " + (tokens.length - 1)
                        + " links, the header names " + devices.size() + " devices");
            }
            links[g] = new String[gpus];
            for (int c = 0; c < devices.size(); c++) {
                String link = tokens[1 + c];
                boolean self = c == g;
                if (self != link.equals("X") || (!self && !NVLINK.matcher(link).matches() && !PCIE.matcher(link).matches()
                        && !(c >= gpus && link.equals("X")))) {
                    throw new IllegalArgumentException("line " + (i + 1) + ": GPU" + g + " to " + devices.get(c)
                            + (self ? " must be X" : ": unknown link '" + link + "' (expected NV#, NVS, PIX, PXB, PHB, NODE or SYS)"));
                }
                if (c < gpus) {
                    links[g][c] = link;
                }
            }
            int rest = 1 + devices.size();
            if (hasCpu && tokens.length > rest) {
                cpuAffinity[g] = tokens[rest];
            }
            if (hasNuma && tokens.length > rest + 1) {
                numaAffinity[g] = tokens[rest + 1];
            }
        }
        if (gpus == 0) {
            throw new IllegalArgumentException("line " + (headerLine + 1) + ": the header names no GPU");
        }
        for (int g = 0; g < gpus; g++) {
            if (links[g] == null) {
                throw new IllegalArgumentException("no row for GPU" + g);
            }
        }
        int[] parent = new int[gpus];
        for (int g = 0; g < gpus; g++) {
            parent[g] = g;
        }
        for (int a = 0; a < gpus; a++) {
            for (int b = a + 1; b < gpus; b++) {
                boolean ab = NVLINK.matcher(links[a][b]).matches();
                boolean ba = NVLINK.matcher(links[b][a]).matches();
                if (ab != ba) {
                    throw new IllegalArgumentException("GPU" + a + " to GPU" + b + " is " + links[a][b] + " but GPU" + b
                            + " to GPU" + a + " is " + links[b][a] + " (the matrix must be symmetric)");
                }
                if (ab) {
                    parent[find(parent, a)] = find(parent, b);
                }
            }
        }
        Map<Integer, List<Integer>> components = new LinkedHashMap<>();
        for (int g = 0; g < gpus; g++) {
            components.computeIfAbsent(find(parent, g), k -> new ArrayList<>()).add(g);
        }
        List<List<Integer>> islands = components.values().stream().filter(c -> c.size() > 1)
                .map(List::copyOf).sorted(Comparator.comparing(List::getFirst)).toList();

        String[] numaKey = known(numaAffinity) ? numaAffinity : known(cpuAffinity) ? cpuAffinity : null;
        List<List<Integer>> numa = List.of();
        if (numaKey != null) {
            Map<String, List<Integer>> byKey = new TreeMap<>();
            for (int g = 0; g < gpus; g++) {
                byKey.computeIfAbsent(numaKey[g], k -> new ArrayList<>()).add(g);
            }
            numa = byKey.values().stream().map(List::copyOf).sorted(Comparator.comparing(List::getFirst)).toList();
        }
        return new NvidiaSmiTopology(gpus, islands, numa, nics);
    }

    private static boolean known(String[] values) {
        for (String v : values) {
            if (v == null || v.equals("N/A")) {
                return false;
            }
        }
        return true;
    }

    private static int find(int[] parent, int x) {
        while (parent[x] != x) {
            parent[x] = parent[parent[x]];
            x = parent[x];
        }
        return x;
    }
}
