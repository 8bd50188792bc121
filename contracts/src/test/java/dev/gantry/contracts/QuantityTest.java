package dev.gantry.contracts;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.gantry.contracts.resources.Quantity;
import org.junit.jupiter.api.Test;

class QuantityTest {

    @Test
    void cpuInCoresAndMillicores() {
        assertThat(Quantity.cpuMillis("500m")).isEqualTo(500);
        assertThat(Quantity.cpuMillis("4")).isEqualTo(4000);
        assertThat(Quantity.cpuMillis("0.25")).isEqualTo(250);
        assertThatThrownBy(() -> Quantity.cpuMillis("4Gi")).hasMessageContaining("not a CPU quantity");
    }

    @Test
    void memoryInBinaryAndDecimalUnitsRoundsUpToMiB() {
        assertThat(Quantity.memoryMiB("64Gi")).isEqualTo(65536);
        assertThat(Quantity.memoryMiB("512Mi")).isEqualTo(512);
        assertThat(Quantity.memoryMiB("1G")).isEqualTo(954);
        assertThat(Quantity.memoryMiB("1")).isEqualTo(1);
        assertThatThrownBy(() -> Quantity.memoryMiB("12 parsecs")).hasMessageContaining("not a Kubernetes quantity");
    }

    @Test
    void countsAreWhole() {
        assertThat(Quantity.count("2")).isEqualTo(2);
        assertThatThrownBy(() -> Quantity.count("1.5")).hasMessageContaining("whole number");
    }
}
