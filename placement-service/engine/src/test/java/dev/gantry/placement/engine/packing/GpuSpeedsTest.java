package dev.gantry.placement.engine.packing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class GpuSpeedsTest {
    @Test
    void aModelIsMatchedByItsNameOrTheLongestPrefixOfIt() {
        assertThat(GpuSpeeds.DEFAULT.of("A100-SXM4-80GB")).isEqualTo(GpuSpeeds.DEFAULT.of("A100"));
        assertThat(GpuSpeeds.DEFAULT.of("a10")).as("A10 is not A100").isLessThan(GpuSpeeds.DEFAULT.of("A100"));
        assertThat(GpuSpeeds.DEFAULT.of("H100-SXM5-80GB")).isGreaterThan(GpuSpeeds.DEFAULT.of("A100-SXM4-80GB"));
        assertThat(GpuSpeeds.DEFAULT.of("V100-PCIE-32GB")).isEqualTo(1.0);
        assertThat(GpuSpeeds.DEFAULT.of("G2")).as("unknown").isEqualTo(GpuSpeeds.UNKNOWN);
        assertThat(GpuSpeeds.DEFAULT.of(null)).isEqualTo(GpuSpeeds.UNKNOWN);
    }

    @Test
    void slownessIsMeasuredFromTheFastestModelInHundredths() {
        GpuSpeeds speeds = GpuSpeeds.parse("H200=2.0,H100=2.0,A100=1.5");
        assertThat(speeds.slownessCentis("H100-SXM5")).isZero();
        assertThat(speeds.slownessCentis("A100")).isEqualTo(50);
        assertThat(speeds.slownessCentis("V100")).isEqualTo(100);
        assertThat(GpuSpeeds.NONE.slownessCentis("T4")).as("no preference").isZero();
    }

    @Test
    void aSiteTableOverridesTheDefaultsEntryByEntry() {
        GpuSpeeds speeds = GpuSpeeds.parse(" g2 = 0.8 , T4=0.5");
        assertThat(speeds.of("G2")).isEqualTo(0.8);
        assertThat(speeds.of("T4")).isEqualTo(0.5);
        assertThat(speeds.of("A100")).isEqualTo(GpuSpeeds.DEFAULT.of("A100"));
        assertThat(GpuSpeeds.parse("none").isNone()).isTrue();
        assertThat(GpuSpeeds.parse("")).isSameAs(GpuSpeeds.DEFAULT);
    }

    @Test
    void aBadEntryIsRefusedNamingIt() {
        assertThatThrownBy(() -> GpuSpeeds.parse("A100")).hasMessageContaining("\"A100\"").hasMessageContaining("MODEL=SPEED");
        assertThatThrownBy(() -> GpuSpeeds.parse("A100=fast")).hasMessageContaining("fast is not a number");
        assertThatThrownBy(() -> GpuSpeeds.parse("A100=0")).hasMessageContaining("above 0");
        assertThatThrownBy(() -> GpuSpeeds.parse("A100=-1")).hasMessageContaining("above 0");
    }
}
