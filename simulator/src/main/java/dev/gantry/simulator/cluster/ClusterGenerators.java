package dev.gantry.simulator.cluster;

import dev.gantry.placement.engine.domain.Node;
import dev.gantry.placement.engine.domain.Topology;
import dev.gantry.simulator.trace.Csv;
import dev.gantry.simulator.trace.TraceJob;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.stream.IntStream;

/** Clusters for the two public traces: Philly-like 8-GPU nodes under leaves, and OpenB's GPU nodes. */
public final class ClusterGenerators {
    /** Philly's racks: 8 nodes (64 GPUs) under one leaf switch. */
    public static final int NODES_PER_LEAF = 8;

    private ClusterGenerators() {
    }

    /**
     * Nodes of 8 GPUs (one NVLink island, InfiniBand) so that the trace's mean GPU demand over
     * its submission span is {@code load} of capacity (about 85% in the issue).
     */
    public static int phillyNodesFor(List<TraceJob> jobs, double load) {
        if (jobs.isEmpty()) {
            throw new IllegalArgumentException("no jobs in the chosen slice of the trace");
        }
        long first = jobs.getFirst().submitSeconds();
        long last = jobs.getLast().submitSeconds();
        double gpuSeconds = jobs.stream().mapToDouble(j -> j.gpuMilli() / 1000.0 * j.durationSeconds()).sum();
        double meanDemand = gpuSeconds / Math.max(1, last - first);
        return Math.max(1, (int) Math.ceil(meanDemand / load / 8));
    }

    public static ClusterFile philly(int nodes) {
        List<Node> out = new ArrayList<>();
        for (int i = 0; i < nodes; i++) {
            int leaf = i / NODES_PER_LEAF;
            out.add(new Node(String.format(Locale.ROOT, "node-%03d", i), "P100", 8,
                    List.of(IntStream.range(0, 8).boxed().toList()), List.of(), 64_000, 512 * 1024,
                    new Topology("z1", "sp" + (leaf / 8), String.format(Locale.ROOT, "lf%02d", leaf)), "ib-a", null, null, true, false));
        }
        return new ClusterFile(out, List.of());
    }

    /** OpenB's GPU nodes (sn, cpu_milli, memory_mib, gpu, model): sharing on, no topology (FGD ignores it). */
    public static ClusterFile openb(Path nodeCsv) {
        Csv csv = Csv.read(nodeCsv);
        csv.require("sn", "cpu_milli", "memory_mib", "gpu", "model");
        List<Node> out = new ArrayList<>();
        for (int i = 0; i < csv.size(); i++) {
            int gpus = (int) csv.longOf(i, "gpu");
            if (gpus == 0) {
                continue;
            }
            out.add(new Node(csv.get(i, "sn").toLowerCase(Locale.ROOT), csv.get(i, "model"), gpus, null, null,
                    csv.longOf(i, "cpu_milli"), csv.longOf(i, "memory_mib"), null, null, null, null, true, true));
        }
        return new ClusterFile(out, List.of());
    }
}
