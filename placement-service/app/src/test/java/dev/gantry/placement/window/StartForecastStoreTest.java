package dev.gantry.placement.window;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** The staleness rule of the stored start-time forecast: older than three forecast periods, every start unknown, with why. */
class StartForecastStoreTest {
    private static final Instant NOW = Instant.parse("2026-12-07T10:00:00Z");
    private static final Duration STALE_AFTER = Duration.ofSeconds(15);
    private static final UUID A = UUID.fromString("00000000-0000-0000-0000-00000000000a");
    private static final UUID B = UUID.fromString("00000000-0000-0000-0000-00000000000b");
    private static final UUID C = UUID.fromString("00000000-0000-0000-0000-00000000000c");

    private static List<StartForecasts.Entry> entries() {
        return List.of(new StartForecasts.Entry(B, NOW.plusSeconds(600), "releases", List.of(A), null),
                new StartForecasts.Entry(A, NOW.plusSeconds(60), "reservation", List.of(C), "reserved: after 1 job ends"),
                new StartForecasts.Entry(C, null, "unknown", List.of(), "unknown: beyond the horizon"));
    }

    @Test
    void aFreshForecastIsServedSoonestFirstOrForTheJobsAskedFor() {
        StartForecastStore.Page page = StartForecastStore.page(NOW.minusSeconds(15), 500, entries(), List.of(), NOW, STALE_AFTER);
        assertThat(page.stale()).isFalse();
        assertThat(page.staleReason()).isNull();
        assertThat(page.items()).extracting(StartForecasts.Entry::jobId).containsExactly(A, B, C);

        StartForecastStore.Page asked = StartForecastStore.page(NOW.minusSeconds(1), 500, entries(), List.of(B, B, UUID.randomUUID()), NOW,
                STALE_AFTER);
        assertThat(asked.items()).extracting(StartForecasts.Entry::startAt).containsExactly(NOW.plusSeconds(600));
    }

    @Test
    void aForecastOlderThanThreePeriodsIsStaleAndItsStartsUnknownWithWhy() {
        StartForecastStore.Page page = StartForecastStore.page(NOW.minusSeconds(16), 500, entries(), List.of(A), NOW, STALE_AFTER);
        assertThat(page.stale()).isTrue();
        assertThat(page.computedAt()).isEqualTo(NOW.minusSeconds(16));
        assertThat(page.staleReason()).contains("16 s ago", "older than 15 s", "has not forecast since");
        assertThat(page.items()).singleElement().satisfies(e -> {
            assertThat(e.jobId()).isEqualTo(A);
            assertThat(e.startAt()).isNull();
            assertThat(e.basis()).isEqualTo("unknown");
            assertThat(e.waitsFor()).isEmpty();
            assertThat(e.note()).startsWith("unknown: the last start-time forecast is of");
        });
    }

    @Test
    void noForecastYetIsNotStale() {
        StartForecastStore.Page page = StartForecastStore.page(null, 500, List.of(), List.of(), NOW, STALE_AFTER);
        assertThat(page.stale()).isFalse();
        assertThat(page.items()).isEmpty();
    }
}
