package dev.gantry.placement.engine.packing;

import static org.assertj.core.api.Assertions.assertThat;

import dev.gantry.placement.engine.TestScenarios;
import dev.gantry.placement.engine.domain.Node;
import dev.gantry.placement.engine.domain.PendingJob;
import dev.gantry.placement.engine.domain.Scenario;
import dev.gantry.placement.engine.domain.TaskGroup;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A workload where the pods that need one GPU model come in many small classes (as OpenB's
 * gpuspec workloads: a fifth to a third of the pods name a model, spread over hundreds of
 * CPU/memory/model combinations), beside fewer, more common classes that take any model. The
 * gauge must still count the model-bound pods by their share of the workload, as FGD's typical
 * pods do (the most popular classes up to 95% of the pods): kept to a fixed number of the most
 * common classes, it dropped every model-bound class and let an any-model pod take the scarce
 * model they need.
 */
class GaugeModelDemandTest {

    private final Scenario base = TestScenarios.load("fragmentation-models");
    private final Node t4 = new Node("t4-0", "T4", 2, null, null, 128_000, 1_000_000, null, null, null, null, true, true);
    private final Node g2 = new Node("g2-0", "G2", 8, null, null, 128_000, 1_000_000, null, null, null, null, true, true);

    private PendingJob pod(String name, long cpuMillis, List<String> models) {
        PendingJob p = base.pending().getFirst();
        return new PendingJob(name, p.queue(), p.priority(), p.submittedAtSeconds(), List.of(new TaskGroup("w", 1, 1, cpuMillis, 0, null)),
                1, models, p.gpuTopology(), p.network(), false, p.nodeSelector(), p.tolerations(), false, false, null);
    }

    /** 70 any-model classes of 10 pods each, 40 T4-only classes of 5 pods each: 22% of the pods need a T4. */
    private WorkloadMix mix() {
        WorkloadMix mix = new WorkloadMix();
        for (int c = 0; c < 70; c++) {
            for (int i = 0; i < 10; i++) {
                mix.record(pod("any-" + c + "-" + i, 1000 + 1000L * c, List.of()));
            }
        }
        for (int c = 0; c < 40; c++) {
            for (int i = 0; i < 5; i++) {
                mix.record(pod("t4-" + c + "-" + i, 1500 + 1000L * c, List.of("T4")));
            }
        }
        return mix;
    }

    @Test
    void theShapesKeptCoverNearlyTheWholeWorkloadModelBoundPodsIncluded() {
        Scenario sc = new Scenario(base.format(), "models", 0, List.of(t4, g2), base.queues(), List.of(), List.of());
        FragmentationGauge gauge = FragmentationGauge.of(sc, mix());
        double t4Share = gauge.shapes().stream().filter(s -> s.models().contains("T4")).mapToDouble(FragmentationGauge.Shape::weight).sum();
        // 95% of 900 pods: the 700 any-model pods and 31 of the 40 T4 classes (155 pods) of 855
        assertThat(gauge.shapes()).hasSize(101);
        assertThat(t4Share).isCloseTo(155.0 / 855, org.assertj.core.api.Assertions.within(1e-9));
    }

    @Test
    void anAnyModelPodLeavesTheScarceModelToThePodsThatNeedIt() {
        PendingJob any = pod("any", 4000, List.of());
        Scenario sc = new Scenario(base.format(), "models", 0, List.of(t4, g2), base.queues(), List.of(), List.of(any));
        GangPacker packer = new GangPacker(sc.nodes(), FragmentationGauge.of(sc, mix()), GpuSpeeds.NONE);
        ClusterState st = new ClusterState(sc);
        int node = packer.candidates(st, any, Replica.of(any), 1).getFirst().tasks().getFirst().node();
        // on the T4 node it would leave one T4 for a fifth of the workload; on the G2 node it uses a GPU the T4 pods cannot
        assertThat(st.node(node).name()).isEqualTo("g2-0");
    }

    /**
     * Popularity alone sends a pod of any model to the model the fewest pods name: free GPUs of a
     * model few classes may use count as fragmented for all the others, so filling them lowers the
     * measure most. On OpenB gpuspec33 that emptied the 39 G3 nodes (312 GPUs) for any-model pods
     * by 20% arrived, while G3-bound pods ask for 130 GPUs, and they failed later with 700 G2 GPUs
     * free. Here 10% of the pods need G3, which has 8 of the cluster's 72 GPUs (7 would fill 90%
     * of it), and 20% need G2, which has 64 (a fifth of them would do): the any-model pod goes to G2.
     */
    @Test
    void anAnyModelPodLeavesTheModelWhoseOwnPodsNeedMostOfItsSupply() {
        List<Node> nodes = new java.util.ArrayList<>();
        for (int i = 0; i < 8; i++) {
            nodes.add(new Node("g2-" + i, "G2", 8, null, null, 128_000, 1_000_000, null, null, null, null, true, true));
        }
        nodes.add(new Node("g3-0", "G3", 8, null, null, 128_000, 1_000_000, null, null, null, null, true, true));
        WorkloadMix mix = new WorkloadMix();
        for (int i = 0; i < 100; i++) {
            mix.record(pod("p" + i, 4000, i < 70 ? List.of() : i < 90 ? List.of("G2") : List.of("G3")));
        }
        PendingJob any = pod("any", 4000, List.of());
        Scenario sc = new Scenario(base.format(), "scarce-g3", 0, nodes, base.queues(), List.of(), List.of(any));
        GangPacker packer = new GangPacker(sc.nodes(), FragmentationGauge.of(sc, mix), GpuSpeeds.NONE);
        ClusterState st = new ClusterState(sc);
        int node = packer.candidates(st, any, Replica.of(any), 1).getFirst().tasks().getFirst().node();
        assertThat(st.node(node).gpuModel()).isEqualTo("G2");
    }

    /**
     * The model-bound demand is counted over every shape the mix holds, not only the shapes the
     * gauge keeps: model-bound pods come in many small classes, the long tail the gauge drops.
     * Here 300 G3-bound classes of one pod each (9% of the pods, 300 of the 304 G3 GPUs if the
     * workload filled the cluster) lie beyond the 256 shapes kept.
     */
    @Test
    void modelBoundDemandInTheLongTailStillKeepsItsModel() {
        List<Node> nodes = new java.util.ArrayList<>();
        for (int i = 0; i < 38; i++) {
            nodes.add(new Node("g2-" + i, "G2", 8, null, null, 128_000, 1_000_000, null, null, null, null, true, true));
            // the G3 nodes have less CPU: best fit among nodes the gauge sees as equal would take them first
            nodes.add(new Node("g3-" + i, "G3", 8, null, null, 96_000, 1_000_000, null, null, null, null, true, true));
        }
        WorkloadMix mix = new WorkloadMix();
        for (int c = 0; c < 300; c++) {
            for (int i = 0; i < 10; i++) {
                mix.record(pod("any-" + c + "-" + i, 1000 + 10L * c, List.of()));
            }
            mix.record(pod("g3-" + c, 1005 + 10L * c, List.of("G3")));
        }
        PendingJob any = pod("any", 4000, List.of());
        Scenario sc = new Scenario(base.format(), "tail-g3", 0, nodes, base.queues(), List.of(), List.of(any));
        FragmentationGauge gauge = FragmentationGauge.of(sc, mix);
        assertThat(gauge.shapes()).as("the G3-bound classes are all beyond the shapes kept")
                .hasSize(FragmentationGauge.MAX_SHAPES).allMatch(s -> s.models().isEmpty());
        GangPacker packer = new GangPacker(sc.nodes(), gauge, GpuSpeeds.NONE);
        ClusterState st = new ClusterState(sc);
        int node = packer.candidates(st, any, Replica.of(any), 1).getFirst().tasks().getFirst().node();
        assertThat(st.node(node).gpuModel()).isEqualTo("G2");
    }
}
