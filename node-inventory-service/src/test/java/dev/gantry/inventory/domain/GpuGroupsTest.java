package dev.gantry.inventory.domain;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;
import org.junit.jupiter.api.Test;

class GpuGroupsTest {

    @Test
    void readsRangesListsAndBothSeparators() {
        assertThat(GpuGroups.parse("0-3;4-7")).containsExactly(List.of(0, 1, 2, 3), List.of(4, 5, 6, 7));
        assertThat(GpuGroups.parse("0,1|2,3")).containsExactly(List.of(0, 1), List.of(2, 3));
        assertThat(GpuGroups.parse(" 0, 1 ; 2-3,5 ")).containsExactly(List.of(0, 1), List.of(2, 3, 5));
        assertThat(GpuGroups.parse("")).isEmpty();
        assertThat(GpuGroups.parse(null)).isEmpty();
        assertThat(GpuGroups.format(List.of(List.of(0, 1, 2, 3), List.of(4, 5), List.of(7)))).isEqualTo("0-3;4,5;7");
    }

    @Test
    void refusesWhatIsNotAGroupList() {
        assertThatThrownBy(() -> GpuGroups.parse("0-3;;4")).hasMessageContaining("group 2 is empty");
        assertThatThrownBy(() -> GpuGroups.parse("a,b")).hasMessageContaining("'a' is not a GPU index");
        assertThatThrownBy(() -> GpuGroups.parse("3-1")).hasMessageContaining("not ascending");
        assertThatThrownBy(() -> GpuGroups.parse("0,-1")).hasMessageContaining("not a GPU index");
    }

    /** The text form is lossless: formatting any groups and parsing the text gives the same groups. */
    @Property(tries = 300)
    void formatThenParseIsIdentity(@ForAll @Size(min = 0, max = 8) List<@Size(min = 1, max = 12) List<@IntRange(min = 0, max = 63) Integer>> groups) {
        List<List<Integer>> copy = new ArrayList<>(groups);
        assertThat(GpuGroups.parse(GpuGroups.format(copy))).isEqualTo(copy);
    }
}
