package dev.gantry.contracts;

import static org.assertj.core.api.Assertions.assertThat;

import dev.gantry.contracts.events.EventCodec;
import dev.gantry.contracts.events.EventEnvelope;
import dev.gantry.contracts.events.Subjects;
import dev.gantry.contracts.placements.PlacementBound;
import dev.gantry.contracts.placements.PlacementReleased;
import dev.gantry.contracts.quota.QuotaShares;
import java.time.Instant;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;

class QuotaAndPlacementPayloadsTest {

    @Test
    void quotaSharesRoundTrip() {
        QuotaShares shares = new QuotaShares(Instant.parse("2026-12-02T12:00:00Z"), new QuotaShares.Capacity(16, 448000, 3800000), 168,
                List.of(new QuotaShares.QueueShare("urgent", null, 2, true, "OPEN", 0, 8, null, 8, 0, 0, 4, 8, 1.0),
                        new QuotaShares.QueueShare("normal", null, 1, true, "OPEN", 0, 16, 12, 8, 0, 0, 12, 4, 0.5)));
        EventEnvelope<QuotaShares> sent = EventEnvelope.of(Subjects.QUOTA_SHARES, "cluster", shares);
        EventEnvelope<QuotaShares> received = EventCodec.decode(EventCodec.encode(sent), QuotaShares.class);
        assertThat(received).isEqualTo(sent);
        assertThat(received.payload().queues().getFirst().capabilityGpus()).isEqualTo(8);
    }

    @Test
    void placementPayloadsRoundTrip() {
        UUID job = UUID.randomUUID();
        var bound = EventEnvelope.of(Subjects.PLACEMENTS_BOUND, job.toString(),
                new PlacementBound(job, "normal", "alice", 8, "A100-SXM4-80GB", 64000, 512000, Instant.parse("2026-12-02T12:00:00Z")));
        var released = EventEnvelope.of(Subjects.PLACEMENTS_PREEMPTED, job.toString(),
                new PlacementReleased(job, "normal", "reclaimed by urgent", Instant.parse("2026-12-02T13:00:00Z")));
        assertThat(EventCodec.decode(EventCodec.encode(bound), PlacementBound.class)).isEqualTo(bound);
        assertThat(EventCodec.decode(EventCodec.encode(released), PlacementReleased.class)).isEqualTo(released);
    }
}
