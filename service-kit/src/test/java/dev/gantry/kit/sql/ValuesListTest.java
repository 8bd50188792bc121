package dev.gantry.kit.sql;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class ValuesListTest {

    @Test
    void rowsNumberTheirParametersInOrderAndCastEachToItsColumnsType() {
        assertThat(ValuesList.of(2, false, "uuid", "text")).isEqualTo("(cast(?1 as uuid), cast(?2 as text)), (cast(?3 as uuid), cast(?4 as text))");
    }

    @Test
    void anOrdinalColumnNumbersTheRowsFromZero() {
        assertThat(ValuesList.of(3, true, "bigint")).isEqualTo("(cast(?1 as bigint), 0), (cast(?2 as bigint), 1), (cast(?3 as bigint), 2)");
    }
}
