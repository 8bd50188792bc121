package dev.gantry.contracts;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.gantry.contracts.events.EventCodec;
import dev.gantry.contracts.jobs.JobQueued;
import dev.gantry.contracts.nodes.NodeInfo;
import dev.gantry.contracts.placements.PlacementBound;
import dev.gantry.contracts.resources.MigProfile;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class MigProfileTest {

    @Test
    void profilesAreSpelledAsNvidiaSpellsThem() {
        assertThat(List.of("1g.10gb", "3g.40gb", "7g.80gb", "1g.10gb+me", "1g.24gb-me", "1c.3g.40gb", "2g.20gb"))
                .allMatch(MigProfile::valid);
        assertThat(List.of("", "1g", "10gb", "8g.80gb", "0g.5gb", "1g.10GB", "1g.10gb+", "1g 10gb", "g.10gb", "nvidia.com/mig-1g.10gb"))
                .noneMatch(MigProfile::valid);
        assertThat(MigProfile.valid(null)).isFalse();
    }

    @Test
    void aDeviceCountsItsSlicesOfSevenOfAGpu() {
        assertThat(MigProfile.slices("3g.40gb")).isEqualTo(3);
        assertThat(MigProfile.slices("1c.3g.40gb")).as("the GPU instance's slices, not the compute instance's").isEqualTo(3);
        assertThat(MigProfile.milli("1g.10gb")).isEqualTo(142);
        assertThat(MigProfile.milli("7g.80gb")).isEqualTo(1000);
        assertThat(7 * MigProfile.milli("1g.10gb")).as("seven small devices never count as more than the GPU").isLessThanOrEqualTo(1000);
        assertThatThrownBy(() -> MigProfile.slices("big")).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("big");
    }

    @Test
    void theDevicePluginResourceNameWritesPlusAsDot() {
        assertThat(MigProfile.resourceName("1g.10gb")).isEqualTo("nvidia.com/mig-1g.10gb");
        assertThat(MigProfile.resourceName("1g.10gb+me")).isEqualTo("nvidia.com/mig-1g.10gb.me");
        assertThat(MigProfile.ofResource("nvidia.com/mig-1g.10gb")).isEqualTo("1g.10gb");
        assertThat(MigProfile.ofResource("nvidia.com/mig-1g.10gb.me")).isEqualTo("1g.10gb+me");
        assertThat(MigProfile.ofResource("nvidia.com/mig-1g.24gb-me")).isEqualTo("1g.24gb-me");
        assertThat(MigProfile.ofResource("nvidia.com/gpu")).isNull();
        assertThat(MigProfile.ofResource("nvidia.com/mig-huge")).isNull();
    }

    @Test
    void migFieldsTravelAndAreLeftOutWhenAbsent() {
        NodeInfo.Mig mig = new NodeInfo.Mig("mixed", Map.of("1g.10gb", 1),
                List.of(new NodeInfo.MigDevice("MIG-1", 5, "1g.10gb", "gpu-5-mig-1g10gb-19-0")));
        assertThat(EventCodec.fromJson(EventCodec.toJson(mig), NodeInfo.Mig.class)).isEqualTo(mig);
        assertThat(EventCodec.fromJson("{\"strategy\":\"mixed\",\"profiles\":{\"1g.10gb\":7}}", NodeInfo.Mig.class).devices())
                .as("older producers count profiles only").isEmpty();

        JobQueued.TaskGroup whole = new JobQueued.TaskGroup("w", 1, 2, null, 0, 0);
        assertThat(EventCodec.toJson(whole)).doesNotContain("migProfile");
        JobQueued.TaskGroup sliced = new JobQueued.TaskGroup("w", 1, 2, null, 0, 0, null, null, null, null, "1g.10gb");
        assertThat(EventCodec.fromJson(EventCodec.toJson(sliced), JobQueued.TaskGroup.class)).isEqualTo(sliced);

        PlacementBound.BoundTask plain = new PlacementBound.BoundTask("w-0", "n", List.of(0), null);
        assertThat(EventCodec.toJson(plain)).doesNotContain("migDevices");
        PlacementBound.BoundTask onMig = new PlacementBound.BoundTask("w-0", "n", List.of(), null, List.of("MIG-1"));
        assertThat(EventCodec.fromJson(EventCodec.toJson(onMig), PlacementBound.BoundTask.class)).isEqualTo(onMig);
    }
}
