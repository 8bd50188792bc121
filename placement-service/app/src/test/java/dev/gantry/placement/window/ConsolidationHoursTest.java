package dev.gantry.placement.window;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.LocalTime;
import org.junit.jupiter.api.Test;

/** {@code gantry.placement.consolidation.hours} as an operator writes it. */
class ConsolidationHoursTest {

    @Test
    void aRangeIncludesItsStartAndNotItsEnd() {
        ConsolidationHours h = ConsolidationHours.parse("01:00-05:00");
        assertThat(h.contains(LocalTime.of(1, 0))).isTrue();
        assertThat(h.contains(LocalTime.of(4, 59))).isTrue();
        assertThat(h.contains(LocalTime.of(5, 0))).isFalse();
        assertThat(h.contains(LocalTime.of(0, 59))).isFalse();
        assertThat(h.contains(LocalTime.NOON)).isFalse();
    }

    @Test
    void rangesMayRunOverMidnightAndSeveralAreAllowed() {
        ConsolidationHours h = ConsolidationHours.parse("22:00-02:00, 12:00-13:00");
        assertThat(h.contains(LocalTime.of(23, 30))).isTrue();
        assertThat(h.contains(LocalTime.of(1, 30))).isTrue();
        assertThat(h.contains(LocalTime.of(12, 30))).isTrue();
        assertThat(h.contains(LocalTime.of(2, 0))).isFalse();
        assertThat(h.contains(LocalTime.of(21, 59))).isFalse();
        assertThat(ConsolidationHours.parse("00:00-24:00").contains(LocalTime.of(23, 59))).isTrue();
        assertThat(ConsolidationHours.parse("00:00-24:00").toString()).isEqualTo("00:00-24:00");
    }

    @Test
    void aMalformedRangeIsRefusedNamingTheKey() {
        assertThatThrownBy(() -> ConsolidationHours.parse("1am-5am")).hasMessageStartingWith("gantry.placement.consolidation.hours")
                .hasMessageContaining("1am-5am");
        assertThatThrownBy(() -> ConsolidationHours.parse("03:00-03:00")).hasMessageContaining("03:00-03:00");
        assertThatThrownBy(() -> ConsolidationHours.parse(" ")).hasMessageContaining("no hours");
    }
}
