package dev.gantry.admission.console;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/** Nodes whose inventory names no spine or leaf: the heat map said "Spine no spine" and used the space in an HTML id. */
class ClusterMapHeadingsTest {

    @Test
    void nodesWithoutTopologyAreHeadedNoSpineAndNoLeafUnderAnIdWithoutSpaces() {
        ClusterMap.Spine none = new ClusterMap.Spine(ClusterMap.NO_SPINE, List.of());
        assertThat(none.title()).isEqualTo("No spine");
        assertThat(none.anchor()).isEqualTo("no-spine");
        assertThat(new ClusterMap.Leaf(ClusterMap.NO_LEAF, List.of()).title()).isEqualTo("No leaf");
        assertThat(new ClusterMap.Spine("sp1", List.of()).title()).isEqualTo("Spine sp1");
        assertThat(new ClusterMap.Leaf("lf1", List.of()).title()).isEqualTo("Leaf lf1");
    }
}
