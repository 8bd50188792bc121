package dev.gantry.simulator;

import dev.gantry.placement.engine.domain.Node;
import dev.gantry.placement.engine.domain.Topology;
import dev.gantry.simulator.cluster.ClusterFile;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;

/** Tiny clusters and traces made in the tests (never the shared trace files). */
public final class TestClusters {
    private TestClusters() {
    }

    /** {@code leaves} x {@code nodesPerLeaf} nodes of 8 GPUs (one NVLink island). */
    public static ClusterFile eightGpuNodes(int leaves, int nodesPerLeaf) {
        List<Node> nodes = new ArrayList<>();
        for (int l = 0; l < leaves; l++) {
            for (int n = 0; n < nodesPerLeaf; n++) {
                nodes.add(new Node("n" + l + "-" + n, "A100", 8, List.of(IntStream.range(0, 8).boxed().toList()), List.of(), 64_000, 512_000,
                        new Topology("z", "s", "lf" + l), "ib", null, null, true, false));
            }
        }
        return new ClusterFile(nodes, List.of());
    }

    public static Path write(Path dir, String name, String text) throws IOException {
        Path p = dir.resolve(name);
        Files.writeString(p, text);
        return p;
    }
}
