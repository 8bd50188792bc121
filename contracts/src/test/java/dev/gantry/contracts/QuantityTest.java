package dev.gantry.contracts;

import dev.gantry.contracts.resources.Quantity;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class QuantityTest {

    @Test
    void cpuQuantitiesBecomeMillicores() {
        assertThat(Quantity.cpuMillis("500m")).isEqualTo(500);
        assertThat(Quantity.cpuMillis("4")).isEqualTo(4000);
        assertThat(Quantity.cpuMillis("0.25")).isEqualTo(250);
        assertThat(Quantity.cpuMillis("1.5")).isEqualTo(1500);
        assertThat(Quantity.cpuMillis("2e3")).isEqualTo(2_000_000);
        assertThat(Quantity.cpuMillis("100u")).isEqualTo(1); // a fraction of a millicore rounds up, as in Kubernetes
        assertThat(Quantity.cpuMillis("1k")).isEqualTo(1_000_000);
    }

    @Test
    void memoryQuantitiesBecomeMiB() {
        assertThat(Quantity.memoryMiB("64Gi")).isEqualTo(65536);
        assertThat(Quantity.memoryMiB("512Mi")).isEqualTo(512);
        assertThat(Quantity.memoryMiB("1Ti")).isEqualTo(1024 * 1024);
        assertThat(Quantity.memoryMiB("1G")).isEqualTo(954); // 10^9 bytes = 953.67 MiB, rounded up
        assertThat(Quantity.memoryMiB("1048576")).isEqualTo(1); // plain bytes
        assertThat(Quantity.memoryMiB("2048Ki")).isEqualTo(2);
    }

    @Test
    void gpuCountsMustBeWhole() {
        assertThat(Quantity.wholeCount("8")).isEqualTo(8);
        assertThat(Quantity.wholeCount("8.0")).isEqualTo(8);
        assertThatThrownBy(() -> Quantity.wholeCount("1.5")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> Quantity.wholeCount("500m")).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void garbageIsRefusedWithTheValueInTheMessage() {
        assertThatThrownBy(() -> Quantity.cpuMillis("four")).hasMessageContaining("'four' is not a Kubernetes quantity");
        assertThatThrownBy(() -> Quantity.memoryMiB("64GB")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> Quantity.memoryMiB("-1Gi")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> Quantity.memoryMiB("")).isInstanceOf(IllegalArgumentException.class);
    }
}
