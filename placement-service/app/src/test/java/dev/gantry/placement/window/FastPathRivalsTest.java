package dev.gantry.placement.window;

import static org.assertj.core.api.Assertions.assertThat;

import dev.gantry.contracts.jobs.JobQueued;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** Which waiting jobs a fast path plans beside the new one: only those that could want the same GPU model. */
class FastPathRivalsTest {

    private static JobQueued job(List<String> models) {
        return new JobQueued(UUID.randomUUID(), "j", "q", "bob", 100, Instant.now(), null,
                List.of(new JobQueued.TaskGroup("main", 1, 1, null, 1000, 4000)), models, null, null, false, Map.of(), List.of(), true,
                false, 60L);
    }

    @Test
    void jobsOfDisjointModelsAreNoRivals() {
        assertThat(WindowLoop.mayShareModel(job(List.of("A100-SXM4-80GB")), job(List.of("T4")))).isFalse();
    }

    @Test
    void aCommonModelOrAnAnyModelJobMakesRivals() {
        assertThat(WindowLoop.mayShareModel(job(List.of("A100-SXM4-80GB", "T4")), job(List.of("T4")))).isTrue();
        assertThat(WindowLoop.mayShareModel(job(List.of()), job(List.of("T4")))).isTrue();
        assertThat(WindowLoop.mayShareModel(job(List.of("T4")), job(null))).isTrue();
    }
}
