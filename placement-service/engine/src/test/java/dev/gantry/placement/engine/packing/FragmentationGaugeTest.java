package dev.gantry.placement.engine.packing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import dev.gantry.placement.engine.TestScenarios;
import dev.gantry.placement.engine.domain.GpuTopology;
import dev.gantry.placement.engine.domain.Node;
import dev.gantry.placement.engine.domain.Plan;
import dev.gantry.placement.engine.domain.PendingJob;
import dev.gantry.placement.engine.domain.Scenario;
import dev.gantry.placement.engine.domain.TaskGroup;
import dev.gantry.placement.engine.domain.Unplaced;
import dev.gantry.placement.engine.planner.GreedyPlanner;
import dev.gantry.placement.engine.planner.Planners;
import dev.gantry.placement.engine.planner.SolverProfile;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The expected-fragmentation measure, by hand on a three-node cluster (two A100 nodes, one V100
 * node) whose workload is one 1-GPU pod of any model and two 8-GPU pods that need A100s.
 */
class FragmentationGaugeTest {

    private final Scenario sc = TestScenarios.load("fragmentation-models");
    private final FragmentationGauge gauge = FragmentationGauge.of(sc);

    @Test
    void theWorkloadIsEveryWaitingPodByShape() {
        assertThat(gauge.shapes()).hasSize(2);
        FragmentationGauge.Shape big = gauge.shapes().getFirst();
        assertThat(big.gpus()).isEqualTo(8);
        assertThat(big.models()).containsExactly("A100");
        assertThat(big.weight()).isCloseTo(2.0 / 3, within(1e-9));
        assertThat(gauge.shapes().get(1).weight()).isCloseTo(1.0 / 3, within(1e-9));
    }

    @Test
    void freeGpusOfAModelTheBigPodsCannotUseCountAsFragmentedForThem() {
        ClusterState st = new ClusterState(sc);
        assertThat(gauge.measure(st, st.indexOf("a100-0"))).isZero();
        // 8 free V100 GPUs: useless to the 8-GPU A100 pods (2/3 of the workload), fine for the 1-GPU pod
        assertThat(gauge.measure(st, st.indexOf("v100-0"))).isCloseTo(8000 * 2.0 / 3, within(1e-6));
    }

    @Test
    void aRememberedMeasureIsNeverTakenForANodeOfAnotherModelOrState() {
        ClusterState st = new ClusterState(sc);
        int a100 = st.indexOf("a100-0");
        int v100 = st.indexOf("v100-0");
        FragmentationGauge fresh = FragmentationGauge.of(sc);
        // the other order than the test above: a remembered V100 measure must not answer for the A100 node
        double v = fresh.measure(st, v100);
        assertThat(fresh.measure(st, a100)).isZero();
        assertThat(fresh.measure(st, v100)).isEqualTo(v);
        st.take(a100, new int[] {0}, null, 0, 0);
        assertThat(fresh.measure(st, a100)).as("a changed node is measured again").isCloseTo(7000 * 2.0 / 3, within(1e-6));
    }

    @Test
    void oneGpuTakenFromAWholeA100NodeCostsItsSevenOthersForTheBigPods() {
        ClusterState st = new ClusterState(sc);
        Replica one = new Replica("w-0", 1, null, 0, 0, GpuTopology.ANY);
        int a100 = st.indexOf("a100-0");
        assertThat(gauge.delta(st, a100, one, new int[] {0})).isCloseTo(7000 * 2.0 / 3, within(1e-6));
        assertThat(gauge.delta(st, st.indexOf("v100-0"), one, new int[] {0})).isCloseTo(-1000 * 2.0 / 3, within(1e-6));
        assertThat(st.freeGpus(a100)).as("measuring changes nothing").isEqualTo(8);
    }

    @Test
    void aSharedGpuWithLessRoomThanASharingPodAsksIsFragmentedForIt() {
        ClusterState st = new ClusterState(TestScenarios.load("sharing"));
        int node = -1;
        for (int i = 0; i < st.size() && node < 0; i++) {
            node = st.node(i).gpuSharing() ? i : -1;
        }
        assertThat(node).as("the sharing fixture has a sharing node").isNotNegative();
        FragmentationGauge halves = new FragmentationGauge(List.of(new FragmentationGauge.Shape(0, 500, 0, 0, java.util.Set.of(), 1.0)));
        double before = halves.measure(st, node);
        st.take(node, new int[] {1}, 700, 0, 0);
        // GPU 1 keeps 300 milli: too little for a 500-milli pod (GPU 0, 400 left, already was)
        assertThat(halves.measure(st, node) - before).isCloseTo(300, within(1e-6));
    }

    @Test
    void aSharingPodTakesTheGpuWhereItLeavesRoomTheWorkloadCanUse() {
        Scenario sharing = TestScenarios.load("sharing");
        PendingJob p = sharing.pending().getFirst();
        // a 300-milli pod; the workload is 400-milli pods. inf-0's GPU 0 holds 600 (400 left: just right for one)
        PendingJob small = new PendingJob("small", p.queue(), p.priority(), p.submittedAtSeconds(),
                List.of(new TaskGroup("server", 1, 1, 2000, 8000, 300)), 1, p.gpuModels(), p.gpuTopology(), p.network(),
                p.requireInfiniBand(), p.nodeSelector(), p.tolerations(), p.preemptible(), p.checkpointable(), p.estimatedRuntimeSeconds());
        FragmentationGauge fourHundreds = new FragmentationGauge(List.of(new FragmentationGauge.Shape(0, 400, 0, 0, java.util.Set.of(), 1.0)));
        ClusterState st = new ClusterState(sharing);
        sharing.running().forEach(st::occupy);
        int[] bestFit = new GangPacker(sharing.nodes()).candidates(st, small, Replica.of(small), 1).getFirst().tasks().getFirst().gpus();
        int[] byFragmentation = new GangPacker(sharing.nodes(), fourHundreds).candidates(st, small, Replica.of(small), 1)
                .getFirst().tasks().getFirst().gpus();
        assertThat(bestFit).as("best fit fills the fullest GPU, leaving 100 milli nobody can use").containsExactly(0);
        assertThat(byFragmentation).as("GPU 1 keeps 700: a 400-milli pod still fits on each").containsExactly(1);
    }

    @Test
    void packingByFragmentationPlacesAllThreeWhereBestFitStrandsTheSecondBigPod() {
        SolverProfile profile = SolverProfile.byName("fast").withTimeLimit(Duration.ofMillis(500));
        Plan bestFit = new GreedyPlanner().plan(sc, profile);
        Plan byFragmentation = Planners.fastPath().plan(sc, profile);
        // best fit sees three equal nodes for the small pod and takes the first A100 node
        assertThat(bestFit.placements()).hasSize(2);
        assertThat(bestFit.unplaced()).extracting(Unplaced::job).containsExactly("big-2");
        assertThat(byFragmentation.placements()).hasSize(3);
        assertThat(nodeOf(byFragmentation, "small")).isEqualTo("v100-0");
        assertThat(byFragmentation.metadata()).containsEntry("planner", "greedy-fragmentation");
        // the solver starts from the same packing and keeps it
        Plan timefold = Planners.byName("timefold").plan(sc, profile);
        assertThat(timefold.placements()).hasSize(3);
        assertThat(nodeOf(timefold, "small")).isEqualTo("v100-0");
    }

    @Test
    void amongNodesTheWorkloadSeesAsEqualTheOneLeftShortestOfCpuGoesFirst() {
        // two idle 8-GPU nodes, one with 64 cores, one with 128; the workload is 1-GPU pods of 4 cores,
        // which fit either way: the gauge sees no difference, GPUs left over neither
        Node roomy = new Node("roomy", "A100", 8, null, null, 128_000, 1_000_000, null, null, null, null, true, true);
        Node lean = new Node("lean", "A100", 8, null, null, 64_000, 1_000_000, null, null, null, null, true, true);
        PendingJob p = sc.pending().getFirst();
        PendingJob pod = new PendingJob("pod", p.queue(), p.priority(), p.submittedAtSeconds(), List.of(new TaskGroup("w", 1, 1, 4000, 0, null)),
                1, List.of(), p.gpuTopology(), p.network(), false, p.nodeSelector(), p.tolerations(), false, false, null);
        Scenario twoNodes = new Scenario(sc.format(), "cpu-tie", 0, List.of(roomy, lean), sc.queues(), List.of(), List.of(pod));
        Plan plan = Planners.fastPath().plan(twoNodes, SolverProfile.byName("fast"));
        assertThat(nodeOf(plan, "pod")).as("the 128-core node stays the one with room for CPU-hungry pods").isEqualTo("lean");
        Plan gpusOnly = new GreedyPlanner().plan(twoNodes, SolverProfile.byName("fast"));
        assertThat(nodeOf(gpusOnly, "pod")).as("plain best fit sees two equal nodes and takes the first").isEqualTo("roomy");
    }

    @Test
    void noWorkloadNoGauge() {
        Scenario empty = new Scenario(sc.format(), "empty", 0, sc.nodes(), sc.queues(), List.of(), List.of());
        assertThat(FragmentationGauge.of(empty)).isNull();
    }

    private static String nodeOf(Plan plan, String job) {
        return plan.placements().stream().filter(p -> p.job().equals(job)).findFirst().orElseThrow().tasks().getFirst().node();
    }
}
