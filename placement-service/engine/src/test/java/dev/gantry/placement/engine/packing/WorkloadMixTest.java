package dev.gantry.placement.engine.packing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import dev.gantry.placement.engine.TestScenarios;
import dev.gantry.placement.engine.domain.Plan;
import dev.gantry.placement.engine.domain.PendingJob;
import dev.gantry.placement.engine.domain.Scenario;
import dev.gantry.placement.engine.planner.Planners;
import dev.gantry.placement.engine.planner.SolverProfile;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The arrivals a gauge keeps room for: on the three-node fixture (two A100 nodes, one V100
 * node) the window holds only the 1-GPU pod; the 8-GPU A100 pods arrived earlier and are
 * gone from the window (as pods that failed to fit are).
 */
class WorkloadMixTest {

    private final Scenario full = TestScenarios.load("fragmentation-models");
    private final PendingJob small = job("small");
    private final PendingJob big = job("big-1");
    private final Scenario onlySmall = new Scenario(full.format(), "only-small", 0, full.nodes(), full.queues(), List.of(),
            List.of(small));

    private PendingJob job(String name) {
        return full.pending().stream().filter(p -> p.name().equals(name)).findFirst().orElseThrow();
    }

    @Test
    void theGaugeKeepsRoomForShapesThatArrivedButAreNotInTheWindow() {
        WorkloadMix mix = new WorkloadMix();
        for (int i = 0; i < 40; i++) {
            mix.record(i % 4 == 0 ? small : big);
        }
        FragmentationGauge gauge = FragmentationGauge.of(onlySmall, mix);
        assertThat(gauge.shapes()).hasSize(2);
        assertThat(gauge.shapes().getFirst().gpus()).isEqualTo(8);
        assertThat(gauge.shapes().getFirst().weight()).isCloseTo(0.75, within(1e-9));

        SolverProfile profile = SolverProfile.byName("fast").withTimeLimit(Duration.ofMillis(300));
        Plan withMix = Planners.fastPath(mix).plan(onlySmall, profile);
        assertThat(withMix.placements().getFirst().tasks().getFirst().node())
                .as("the 1-GPU pod leaves both A100 nodes whole for the 8-GPU pods that keep arriving").isEqualTo("v100-0");
        Plan windowOnly = Planners.fastPath().plan(onlySmall, profile);
        assertThat(windowOnly.placements().getFirst().tasks().getFirst().node())
                .as("the window alone sees three equal nodes and breaks the first A100 node").isEqualTo("a100-0");
        Plan timefold = Planners.byName("timefold", mix).plan(onlySmall, profile);
        assertThat(timefold.placements().getFirst().tasks().getFirst().node()).isEqualTo("v100-0");
    }

    @Test
    void untilEnoughPodsHaveArrivedTheWindowsOwnWorkloadDecides() {
        WorkloadMix mix = new WorkloadMix();
        for (int i = 0; i < FragmentationGauge.MIN_MIX_PODS - 1; i++) {
            mix.record(big);
        }
        FragmentationGauge gauge = FragmentationGauge.of(onlySmall, mix);
        assertThat(gauge.shapes()).hasSize(1);
        assertThat(gauge.shapes().getFirst().gpus()).as("the window holds only the 1-GPU pod").isEqualTo(1);
    }

    @Test
    void countsAreHalvedPastTheHorizonSoAShapeSeenOnceLongAgoIsForgotten() {
        WorkloadMix mix = new WorkloadMix(10);
        mix.record(small);
        for (int i = 0; i < 10; i++) {
            mix.record(big);
        }
        // 11 > 10: halved to 0.5 small + 5 big; 0.5 is kept (not below 0.5)
        assertThat(mix.total()).isCloseTo(5.5, within(1e-9));
        for (int i = 0; i < 5; i++) {
            mix.record(big);
        }
        // 10.5 > 10: halved again, small at 0.25 is dropped
        assertThat(mix.counts()).hasSize(1);
        assertThat(mix.total()).isCloseTo(5.0, within(1e-9));
        assertThatThrownBy(() -> new WorkloadMix(1)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("horizon");
    }
}
