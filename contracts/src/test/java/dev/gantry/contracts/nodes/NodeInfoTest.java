package dev.gantry.contracts.nodes;

import static org.assertj.core.api.Assertions.assertThat;

import dev.gantry.contracts.events.EventCodec;
import dev.gantry.contracts.events.EventEnvelope;
import dev.gantry.contracts.events.Subjects;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class NodeInfoTest {

    static NodeInfo dgx() {
        return new NodeInfo("dgx-01", "A100-SXM4-80GB", 8, List.of(List.of(0, 1, 2, 3, 4, 5, 6, 7)),
                List.of(List.of(0, 1, 2, 3), List.of(4, 5, 6, 7)), false, 224000, 1900000,
                new NodeInfo.Topology("z1", "sp1", "lf1"), "ib-a", Map.of("a", "b"),
                List.of(new NodeInfo.Taint("k", "v", "NoSchedule")), true, NodeInfo.Health.READY,
                81920, new NodeInfo.Mig("mixed", Map.of("1g.10gb", 7)), 8, false, Instant.parse("2026-12-02T10:00:00Z"));
    }

    @Test
    void nodeChangedRoundTripsThroughTheEventCodec() {
        NodeChanged sent = new NodeChanged(42, dgx());
        String json = EventCodec.encode(EventEnvelope.of(Subjects.NODES_UPSERTED, "dgx-01", sent));
        assertThat(EventCodec.decode(json, NodeChanged.class).payload()).isEqualTo(sent);
        assertThat(json).contains("\"snapshotVersion\":42").contains("\"lastHeartbeat\":\"2026-12-02T10:00:00Z\"");

        NodeRemoved removed = new NodeRemoved(43, "dgx-01");
        assertThat(EventCodec.decode(EventCodec.encode(EventEnvelope.of(Subjects.NODES_REMOVED, "dgx-01", removed)),
                NodeRemoved.class).payload()).isEqualTo(removed);
    }

    @Test
    void missingCollectionsReadAsEmptySoDescriptionsCompareEqual() {
        NodeInfo sparse = EventCodec.fromJson("{\"name\":\"n1\",\"gpus\":0,\"schedulable\":true}", NodeInfo.class);
        assertThat(sparse.nvlinkIslands()).isEmpty();
        assertThat(sparse.labels()).isEmpty();
        assertThat(sparse.topology()).isEqualTo(NodeInfo.Topology.UNKNOWN);
        assertThat(sparse.health()).isEqualTo(NodeInfo.Health.UNKNOWN);
        assertThat(sparse).isEqualTo(new NodeInfo("n1", null, 0, List.of(), List.of(), false, 0, 0, null, null,
                Map.of(), List.of(), true, null, 0, null, 0, false, null));
    }

    @Test
    void withersChangeOnlyTheirFields() {
        NodeInfo node = dgx();
        assertThat(node.withSchedulable(false, true)).extracting(NodeInfo::schedulable, NodeInfo::cordoned, NodeInfo::gpus)
                .containsExactly(false, true, 8);
        assertThat(node.withHealth(NodeInfo.Health.NOT_READY, null).withHealth(NodeInfo.Health.READY, node.lastHeartbeat()))
                .isEqualTo(node);
    }
}
