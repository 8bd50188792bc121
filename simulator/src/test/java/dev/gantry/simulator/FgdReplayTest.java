package dev.gantry.simulator;

import static org.assertj.core.api.Assertions.assertThat;

import dev.gantry.placement.engine.domain.Node;
import dev.gantry.placement.engine.planner.SolverProfile;
import dev.gantry.simulator.cluster.ClusterFile;
import dev.gantry.simulator.replay.FgdReplay;
import dev.gantry.simulator.replay.Progress;
import dev.gantry.simulator.trace.OpenbTrace;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The FGD protocol on hand-sized clusters. */
class FgdReplayTest {
    private static final SolverProfile PROFILE = SolverProfile.FAST.withTimeLimit(Duration.ofMillis(100));

    private static ClusterFile sharingNodes(int nodes, int gpus, String model) {
        return new ClusterFile(java.util.stream.IntStream.range(0, nodes)
                .mapToObj(i -> new Node("n" + i, model, gpus, null, null, 32_000, 128_000, null, null, null, null, true, true))
                .toList(), List.of());
    }

    @Test
    void halfGpuPodsFillTheClusterExactlyAndTheRestFail() {
        // 2 GPUs = 2000 milli; 500-milli pods arrive until 130% (2600): 6 pods, 4 fit
        ClusterFile cluster = sharingNodes(1, 2, "T4");
        List<OpenbTrace.Pod> pods = List.of(new OpenbTrace.Pod("p", 1000, 1000, 1, 500, List.of()));
        FgdReplay replay = new FgdReplay(cluster, pods, PROFILE, true, false);
        assertThat(replay.arrivals(42)).hasSize(6);
        for (String policy : List.of("greedy", "fifo", "timefold")) {
            FgdReplay.Curve c = replay.run(policy, 1, "online", 42, Progress.NONE);
            assertThat(c.at(0)).isZero();
            assertThat(c.at(25)).isEqualTo(25.0);
            assertThat(c.at(50)).isEqualTo(50.0);
            assertThat(c.at(100)).isEqualTo(100.0);
            assertThat(c.at(130)).isEqualTo(100.0);
            assertThat(c.failedPods()).isEqualTo(2);
        }
    }

    @Test
    void gpuSpecKeepsPodsOffOtherModels() {
        // one V100 node and one T4 node, 1 GPU each; every pod asks for V100: only half the capacity can be used
        ClusterFile cluster = new ClusterFile(List.of(
                new Node("v", "V100", 1, null, null, 32_000, 128_000, null, null, null, null, true, true),
                new Node("t", "T4", 1, null, null, 32_000, 128_000, null, null, null, null, true, true)), List.of());
        List<OpenbTrace.Pod> pods = List.of(new OpenbTrace.Pod("p", 1000, 1000, 1, 1000, List.of("V100")));
        FgdReplay.Curve c = new FgdReplay(cluster, pods, PROFILE, true, false).run("greedy", 1, "online", 1, Progress.NONE);
        assertThat(c.at(130)).isEqualTo(50.0);
        assertThat(c.failedPods()).isEqualTo(2);
    }

    @Test
    void batchedWindowsOrderArrivalsBiggestFirst() {
        // one node, 2 GPUs. Arrival order (seed-independent here, identical shapes per kind) matters online:
        // a 600-milli pod on each GPU leaves no room for a whole-GPU pod; a batch sees them together.
        ClusterFile cluster = sharingNodes(1, 2, "T4");
        List<OpenbTrace.Pod> pods = List.of(
                new OpenbTrace.Pod("small", 1000, 1000, 1, 400, List.of()),
                new OpenbTrace.Pod("whole", 1000, 1000, 1, 1000, List.of()));
        FgdReplay replay = new FgdReplay(cluster, pods, PROFILE, true, false);
        FgdReplay.Curve batched = replay.run("greedy", 64, "batched", 7, Progress.NONE);
        FgdReplay.Curve online = replay.run("greedy", 1, "online", 7, Progress.NONE);
        assertThat(batched.at(130)).isGreaterThanOrEqualTo(online.at(130));
        assertThat(batched.at(130)).isLessThanOrEqualTo(100.0);
        assertThat(batched.windows()).isEqualTo(1);
        assertThat(online.windows()).isEqualTo(online.arrivedPods());
    }
}
