package dev.gantry.placement.window;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.gantry.placement.engine.solver.MoveCost;
import dev.gantry.placement.engine.solver.SolverConfigs;
import java.util.Map;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** {@code gantry.placement.weights} as an operator writes it in a ConfigMap. */
class WeightOverridesTest {

    @Test
    void pairsWithSpacesInNamesAreRead() {
        assertThat(WindowLoop.weightOverrides("Fragmentation=5, Fair share deviation = 2,")).isEqualTo(
                Map.of("Fragmentation", 5L, "Fair share deviation", 2L));
        assertThat(WindowLoop.weightOverrides("")).isEmpty();
    }

    @Test
    void malformedPairsAndWeightsAreRefusedByName() {
        assertThatThrownBy(() -> WindowLoop.weightOverrides("Fragmentation")).hasMessageContaining("Constraint name=weight");
        assertThatThrownBy(() -> WindowLoop.weightOverrides("Fragmentation=lots")).hasMessageContaining("Fragmentation")
                .hasMessageContaining("lots");
    }

    @Test
    void theEngineRefusesHardAndUnknownConstraints() {
        assertThatThrownBy(() -> SolverConfigs.weights(WindowLoop.weightOverrides("Fragmentation=5,No such rule=1")))
                .hasMessageContaining("unknown constraint \"No such rule\"");
    }

    @Test
    void gpuSpeedsAreReadOverTheEnginesTableAndAMalformedOneIsRefusedNamingTheKey() {
        assertThat(WindowLoop.gpuSpeeds("A100=2.4, G2=0.8").of("A100-SXM4-80GB")).isEqualTo(2.4);
        assertThat(WindowLoop.gpuSpeeds("none").isNone()).isTrue();
        assertThat(WindowLoop.gpuSpeeds("").of("H100")).isEqualTo(dev.gantry.placement.engine.packing.GpuSpeeds.DEFAULT.of("H100"));
        assertThatThrownBy(() -> WindowLoop.gpuSpeeds("A100=fast")).hasMessageStartingWith("gantry.placement.gpu-speeds: ")
                .hasMessageContaining("fast is not a number");
    }

    @Test
    void aMoveCostKeyOverridesTheProfilesAmountAndANegativeOneIsRefusedNamingTheKey() {
        assertThat(WindowLoop.moveCost(MoveCost.DEFAULT, Optional.empty(), Optional.empty())).isEqualTo(MoveCost.DEFAULT);
        assertThat(WindowLoop.moveCost(MoveCost.DEFAULT, Optional.of(3000L), Optional.empty())).isEqualTo(new MoveCost(3000, 100));
        assertThat(WindowLoop.moveCost(MoveCost.DEFAULT, Optional.empty(), Optional.of(0L))).isEqualTo(new MoveCost(1000, 0));
        assertThatThrownBy(() -> WindowLoop.moveCost(MoveCost.DEFAULT, Optional.of(-1L), Optional.empty()))
                .hasMessageStartingWith("gantry.placement.move-cost.per-move");
        assertThatThrownBy(() -> WindowLoop.moveCost(MoveCost.DEFAULT, Optional.empty(), Optional.of(-5L)))
                .hasMessageStartingWith("gantry.placement.move-cost.per-gpu");
    }

    @Test
    void reclaimTowardFairShareReachesTheProfileTheWindowsPlanWith() {
        assertThat(WindowLoop.profile("fast", Optional.empty(), Optional.empty(), Optional.empty(), Optional.empty(), false)
                .reclaimTowardFairShare()).isFalse();
        var on = WindowLoop.profile("balanced", Optional.of("Fragmentation=5"), Optional.empty(), Optional.of(3000L), Optional.empty(), true);
        assertThat(on.reclaimTowardFairShare()).isTrue();
        assertThat(on.name()).isEqualTo("balanced");
        assertThat(on.weightOverrides()).containsEntry("Fragmentation", 5L);
        assertThat(on.moveCost()).isEqualTo(new MoveCost(3000, 100));
    }

    @Test
    void fairShareTreesNameTheRootQueuesAndNoneMeansEveryTree() {
        assertThat(WindowLoop.fairShareTrees(Optional.empty())).isEmpty();
        assertThat(WindowLoop.fairShareTrees(Optional.of(List.of(" research ", "", "prod")))).containsExactlyInAnyOrder("research", "prod");
        var profile = WindowLoop.profile("fast", Optional.empty(), Optional.empty(), Optional.empty(), Optional.empty(), true)
                .withFairShareTrees(WindowLoop.fairShareTrees(Optional.of(List.of("research"))));
        assertThat(profile.reclaimTowardFairShare()).isTrue();
        assertThat(profile.fairShareTrees()).containsExactly("research");
    }
}
