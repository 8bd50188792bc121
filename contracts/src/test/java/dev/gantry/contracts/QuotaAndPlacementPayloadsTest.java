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

    @Test
    void boundCarriesEachTaskAndReleasedItsExitCode() {
        UUID job = UUID.randomUUID();
        var bound = EventEnvelope.of(Subjects.PLACEMENTS_BOUND, job.toString(),
                new PlacementBound(job, "normal", "alice", 3, "A100-SXM4-80GB", 3000, 3000, Instant.parse("2026-12-02T12:00:00Z"),
                        List.of(new PlacementBound.BoundTask("worker-0", "dgx-01", List.of(0, 1), null),
                                new PlacementBound.BoundTask("ps-0", "dgx-02", List.of(3), 500))));
        var failed = EventEnvelope.of(Subjects.PLACEMENTS_FAILED, job.toString(),
                new PlacementReleased(job, "normal", "task worker-0 on node dgx-01 exited with code 3", Instant.now(), 3));
        EventEnvelope<PlacementBound> boundBack = EventCodec.decode(EventCodec.encode(bound), PlacementBound.class);
        assertThat(boundBack).isEqualTo(bound);
        assertThat(boundBack.payload().tasks().get(1).gpus()).containsExactly(3);
        assertThat(EventCodec.decode(EventCodec.encode(failed), PlacementReleased.class).payload().exitCode()).isEqualTo(3);
    }

    @Test
    void eventsOfOlderProducersStillRead() {
        UUID job = UUID.randomUUID();
        String oldBound = "{\"eventId\":\"" + UUID.randomUUID() + "\",\"type\":\"placements.bound\",\"occurredAt\":\"2026-12-02T12:00:00Z\","
                + "\"subjectId\":\"" + job + "\",\"version\":1,\"payload\":{\"jobId\":\"" + job + "\",\"queue\":\"normal\",\"gpus\":2,"
                + "\"cpuMillis\":0,\"memoryMiB\":0,\"boundAt\":\"2026-12-02T12:00:00Z\"}}";
        assertThat(EventCodec.decode(oldBound, PlacementBound.class).payload().tasks()).isEmpty();
        String oldReleased = oldBound.replace("placements.bound", "placements.failed")
                .replace("\"gpus\":2,\"cpuMillis\":0,\"memoryMiB\":0,\"boundAt\"", "\"reason\":\"boom\",\"releasedAt\"");
        PlacementReleased released = EventCodec.decode(oldReleased, PlacementReleased.class).payload();
        assertThat(released.reason()).isEqualTo("boom");
        assertThat(released.exitCode()).isNull();
    }
}
