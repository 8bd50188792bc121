package dev.gantry.placement.engine.planner;

import static org.assertj.core.api.Assertions.assertThat;

import dev.gantry.placement.engine.TestScenarios;
import dev.gantry.placement.engine.domain.Node;
import dev.gantry.placement.engine.domain.PendingJob;
import dev.gantry.placement.engine.domain.Placement;
import dev.gantry.placement.engine.domain.Plan;
import dev.gantry.placement.engine.domain.Scenario;
import dev.gantry.placement.engine.domain.TaskGroup;
import dev.gantry.placement.engine.domain.TaskPlacement;
import dev.gantry.placement.engine.domain.Topology;
import dev.gantry.placement.engine.packing.GpuSpeeds;
import dev.gantry.placement.engine.packing.WorkloadMix;
import dev.gantry.placement.engine.validation.PlanValidator;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Issue 24's second observation, as traps: with no model or network wish, a 2 x 8-GPU gang went to
 * two PCIe V100 nodes without InfiniBand while sixteen DGX A100 nodes (NVLink, one IB fabric) sat
 * idle, and 1-GPU jobs filled the V100s first. Gantry's defaults are soft: a gang that must span
 * nodes prefers one fabric (one leaf of it first), a multi-GPU pod one NVLink island, a job the
 * faster GPU model, each only among placements the workload sees as equal.
 */
class DefaultPreferencesTest {
    private static final SolverProfile TEST = SolverProfile.FAST.withTimeLimit(Duration.ofSeconds(3));

    private static Plan plan(String planner, Scenario sc, SolverProfile profile) {
        Plan plan = Planners.byName(planner, new WorkloadMix()).plan(sc, profile);
        assertThat(PlanValidator.validate(sc, plan)).as(planner + " plan valid").isEmpty();
        return plan;
    }

    private static Placement placement(Plan plan, String job) {
        return plan.placements().stream().filter(p -> p.job().equals(job)).findFirst().orElseThrow(() -> new AssertionError(job + " not placed"));
    }

    private static Map<String, Node> byName(Scenario sc) {
        return sc.nodes().stream().collect(Collectors.toMap(Node::name, n -> n));
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"timefold", "greedy-fragmentation"})
    void theGangLandsOnOneFabricAndLeafOfTheFastNodesAndTheSmallJobOnAFastGpu(String planner) {
        Scenario sc = TestScenarios.load("trap-defaults");
        Plan plan = planner.equals("timefold") ? plan("timefold", sc, TEST)
                : Planners.fastPath(new WorkloadMix()).plan(sc, TEST);
        assertThat(PlanValidator.validate(sc, plan)).isEmpty();
        Map<String, Node> nodes = byName(sc);

        List<Node> gangNodes = placement(plan, "ddp-2x8").tasks().stream().map(t -> nodes.get(t.node())).distinct().toList();
        assertThat(gangNodes).hasSize(2);
        assertThat(gangNodes).extracting(Node::gpuModel).containsOnly("A100-SXM4-80GB");
        assertThat(gangNodes).extracting(Node::ibFabric).containsOnly("ib-a");
        assertThat(gangNodes).extracting(n -> n.topology().leaf()).as("one leaf of the fabric").hasSize(2).containsOnly(gangNodes.get(0).topology().leaf());

        TaskPlacement small = placement(plan, "one-gpu").tasks().getFirst();
        assertThat(nodes.get(small.node()).gpuModel()).as("the faster model, nothing else to choose between").isEqualTo("A100-SXM4-80GB");
    }

    @Test
    void theBaselineGreedyStillFallsIntoTheTrap() {
        // plain best fit (the baseline planner) takes the smaller V100 nodes: what the trap is about
        Scenario sc = TestScenarios.load("trap-defaults");
        Plan plan = plan("greedy", sc, TEST);
        Map<String, Node> nodes = byName(sc);
        assertThat(placement(plan, "ddp-2x8").tasks()).extracting(t -> nodes.get(t.node()).gpuModel()).containsOnly("V100-PCIE-32GB");
    }

    @Test
    void withoutSpeedsTheSmallJobIsPlacedByFitAlone() {
        // GpuSpeeds.NONE: what a site that wants no model preference gets; the fabric wish still holds
        Scenario sc = TestScenarios.load("trap-defaults");
        Plan plan = plan("timefold", sc, TEST.withGpuSpeeds(GpuSpeeds.NONE));
        Map<String, Node> nodes = byName(sc);
        assertThat(nodes.get(placement(plan, "one-gpu").tasks().getFirst().node()).gpuModel()).isEqualTo("V100-PCIE-32GB");
        assertThat(placement(plan, "ddp-2x8").tasks()).extracting(t -> nodes.get(t.node()).ibFabric()).containsOnly("ib-a");
    }

    @Test
    void aSmallJobLeavesTheFastNodesToTheBigPodsTheWorkloadNeedsThem() {
        // the arrivals so far are 8-GPU pods that only run on A100s: a 1-GPU job breaking an A100 node
        // would strand capacity the workload needs, so speed gives way and it takes a V100
        Scenario base = TestScenarios.load("trap-defaults");
        WorkloadMix mix = new WorkloadMix();
        for (int i = 0; i < 50; i++) {
            mix.record(new PendingJob("big-" + i, "default", 100, -100, List.of(new TaskGroup("w", 1, 8, 16_000, 100_000, null)), 1,
                    List.of("A100-SXM4-80GB"), null, null, false, null, null, true, true, null));
        }
        List<Node> nodes = new ArrayList<>(base.nodes().subList(0, 4)); // v100-0, v100-1, dgx-00, dgx-01
        Scenario sc = new Scenario(base.format(), "speed-yields-to-the-mix", 0, nodes, base.queues(), List.of(),
                List.of(base.pending().get(1)));
        for (Plan plan : List.of(Planners.byName("timefold", mix).plan(sc, TEST), Planners.fastPath(mix).plan(sc, TEST))) {
            assertThat(PlanValidator.validate(sc, plan)).isEmpty();
            assertThat(placement(plan, "one-gpu").tasks().getFirst().node()).startsWith("v100-");
        }
    }

    @Test
    void aFourGpuPodTakesTheNodeWhereItsGpusShareAnIsland() {
        // two otherwise equal nodes with 4 GPUs free each: on "split" they lie in two islands, on "whole" in one
        List<List<Integer>> islands = List.of(List.of(0, 1, 2, 3), List.of(4, 5, 6, 7));
        Node split = new Node("split", "A100-SXM4-80GB", 8, islands, islands, 128_000, 1_000_000, new Topology("z", "s", "l"), null, null, null, true, false);
        Node whole = new Node("whole", "A100-SXM4-80GB", 8, islands, islands, 128_000, 1_000_000, new Topology("z", "s", "l"), null, null, null, true, false);
        var busySplit = new dev.gantry.placement.engine.domain.RunningJob("busy-split", "default", 0, false, false, false, -600,
                List.of(new dev.gantry.placement.engine.domain.RunningTask("w-0", "split", List.of(0, 1, 4, 5), 1000, 1000, null)));
        var busyWhole = new dev.gantry.placement.engine.domain.RunningJob("busy-whole", "default", 0, false, false, false, -600,
                List.of(new dev.gantry.placement.engine.domain.RunningTask("w-0", "whole", List.of(0, 1, 2, 3), 1000, 1000, null)));
        PendingJob quad = new PendingJob("quad", "default", 100, -10, List.of(new TaskGroup("w", 1, 4, 1000, 1000, null)), 1, null, null, null,
                false, null, null, true, true, null);
        for (List<Node> order : List.of(List.of(split, whole), List.of(whole, split))) {
            Scenario sc = new Scenario(Scenario.FORMAT, "island", 0, order, TestScenarios.load("trap-defaults").queues(),
                    List.of(busySplit, busyWhole), List.of(quad));
            for (String planner : List.of("timefold", "fast path")) {
                Plan plan = planner.equals("timefold") ? plan("timefold", sc, TEST) : Planners.fastPath(new WorkloadMix()).plan(sc, TEST);
                TaskPlacement t = placement(plan, "quad").tasks().getFirst();
                assertThat(t.node()).as(planner + " with nodes " + order.stream().map(Node::name).toList()).isEqualTo("whole");
                assertThat(Set.copyOf(t.gpus())).isEqualTo(Set.of(4, 5, 6, 7));
            }
        }
    }
}
