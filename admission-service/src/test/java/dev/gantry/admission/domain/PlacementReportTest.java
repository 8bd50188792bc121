package dev.gantry.admission.domain;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class PlacementReportTest {

    @Test
    void aNewerReportStatesWhereTheJobIsWhateverCameBefore() {
        assertThat(PlacementReport.COMPLETED.apply(JobState.QUEUED, 0, 11)).contains(JobState.SUCCEEDED);
        assertThat(PlacementReport.FAILED.apply(JobState.QUEUED, 3, 4)).contains(JobState.FAILED);
        assertThat(PlacementReport.PENDING.apply(JobState.PLACED, 5, 9)).contains(JobState.QUEUED);
        assertThat(PlacementReport.REQUEUED.apply(JobState.RUNNING, 5, 6)).contains(JobState.QUEUED);
    }

    @Test
    void anOlderOrRepeatedReportIsStale() {
        assertThat(PlacementReport.BOUND.apply(JobState.SUCCEEDED, 11, 10)).isEmpty();
        assertThat(PlacementReport.BOUND.apply(JobState.QUEUED, 7, 5)).isEmpty();
        assertThat(PlacementReport.BOUND.apply(JobState.QUEUED, 7, 7)).isEmpty();
    }

    @Test
    void aFinalStateIsNeverLeft() {
        for (PlacementReport report : PlacementReport.values()) {
            assertThat(report.apply(JobState.CANCELLED, 1, 99)).as(report.name()).isEmpty();
            assertThat(report.apply(JobState.SUCCEEDED, 1, 99)).as(report.name()).isEmpty();
            assertThat(report.apply(JobState.FAILED, 1, 99)).as(report.name()).isEmpty();
        }
    }

    @Test
    void withoutASequenceOnlyTheJobsOwnTransitionsApply() {
        assertThat(PlacementReport.COMPLETED.apply(JobState.QUEUED, 0, 0)).isEmpty();
        assertThat(PlacementReport.COMPLETED.apply(JobState.PLACED, 0, 0)).contains(JobState.SUCCEEDED);
        assertThat(PlacementReport.PENDING.apply(JobState.PLACED, 0, 0)).isEmpty();
        assertThat(PlacementReport.BOUND.apply(JobState.QUEUED, 0, 0)).contains(JobState.PLACED);
        assertThat(PlacementReport.PREEMPTED.apply(JobState.QUEUED, 0, 0)).isEmpty();
    }
}
