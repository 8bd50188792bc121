package dev.gantry.admission;

import static dev.gantry.admission.domain.JobState.CANCELLED;
import static dev.gantry.admission.domain.JobState.FAILED;
import static dev.gantry.admission.domain.JobState.PLACED;
import static dev.gantry.admission.domain.JobState.PREEMPTED;
import static dev.gantry.admission.domain.JobState.QUEUED;
import static dev.gantry.admission.domain.JobState.RUNNING;
import static dev.gantry.admission.domain.JobState.SUCCEEDED;
import static org.assertj.core.api.Assertions.assertThat;

import dev.gantry.admission.domain.JobState;
import org.junit.jupiter.api.Test;

class JobStateTest {

    @Test
    void theHappyPathAndPreemptionAreLegal() {
        assertThat(QUEUED.canBecome(PLACED)).isTrue();
        assertThat(PLACED.canBecome(RUNNING)).isTrue();
        assertThat(RUNNING.canBecome(SUCCEEDED)).isTrue();
        assertThat(RUNNING.canBecome(PREEMPTED)).isTrue();
        assertThat(PREEMPTED.canBecome(QUEUED)).isTrue();
    }

    @Test
    void everyLiveStateCanBeCancelledAndFinalStatesGoNowhere() {
        for (JobState state : JobState.values()) {
            assertThat(state.canBecome(CANCELLED)).as(state + " -> CANCELLED").isEqualTo(!state.isFinal());
        }
        assertThat(SUCCEEDED.next()).isEmpty();
        assertThat(FAILED.next()).isEmpty();
        assertThat(QUEUED.canBecome(RUNNING)).as("a job is placed before it runs").isFalse();
        assertThat(SUCCEEDED.canBecome(QUEUED)).isFalse();
    }
}
