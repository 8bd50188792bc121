package dev.gantry.admission;

import static org.assertj.core.api.Assertions.assertThat;

import dev.gantry.admission.domain.JobSpec;
import dev.gantry.contracts.jobs.JobQueued;
import dev.gantry.contracts.validation.FieldViolation;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * The MIG shapes placement reads from users' pods ({@code nvidia.com/mig-<profile>} limits): a gang of pods asking
 * for devices of one profile is a valid MIG job; one whose pod asked for what one task group cannot hold (placement
 * quotes it as the group's {@code migProfile}) is refused, the refusal saying what the pod asked for.
 */
class PodGangMigShapeTest {

    private static JobSpec gangOf(String migProfile, int devices) {
        JobQueued pods = new JobQueued(UUID.randomUUID(), "notebooks", "normal", null, 0, Instant.now(), 2,
                List.of(new JobQueued.TaskGroup("pod", 2, devices, null, 500, 0, null, null, null, null, migProfile)), null, null, null,
                false, Map.of(), List.of(), true, false, null);
        return PodGangAdmission.specOf(pods, "vision");
    }

    @Test
    void podsAskingForDevicesOfOneProfileAreAValidMigGang() {
        JobSpec spec = gangOf("1g.10gb", 1);
        assertThat(spec.quantityViolations()).isEmpty();
        assertThat(spec.violations()).isEmpty();
        assertThat(spec.taskGroups().getFirst().migProfile()).isEqualTo("1g.10gb");
    }

    @Test
    void aPodAskingForWholeGpusAndMigDevicesIsRefusedQuotingWhatItAsked() {
        JobSpec spec = gangOf("one pod asks for nvidia.com/gpu and nvidia.com/mig-1g.10gb", 1);
        assertThat(spec.quantityViolations()).isEmpty();
        assertThat(spec.violations()).extracting(FieldViolation::message)
                .anySatisfy(m -> assertThat(m).contains("one pod asks for nvidia.com/gpu and nvidia.com/mig-1g.10gb"));
    }
}
