package dev.gantry.placement.engine.planner;

import static org.assertj.core.api.Assertions.assertThat;

import dev.gantry.placement.engine.TestScenarios;
import dev.gantry.placement.engine.domain.Plan;
import dev.gantry.placement.engine.domain.Scenario;
import dev.gantry.placement.engine.packing.WorkloadMix;
import dev.gantry.placement.engine.validation.PlanValidator;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** A burst's planner: the fast path's greedy plan when everyone fits as things are, the full planner otherwise. */
class GreedyWhenAllFitTest {
    private static final SolverProfile TEST = SolverProfile.FAST.withTimeLimit(Duration.ofSeconds(2));

    @Test
    void whenEveryPendingJobFitsTheFastPathsPlanIsTakenWithoutSolving() {
        Scenario sc = TestScenarios.load("trap-defaults");
        Plan plan = Planners.greedyWhenAllFit(Planners.byName("timefold", new WorkloadMix()), new WorkloadMix()).plan(sc, TEST);
        Plan fastPath = Planners.fastPath(new WorkloadMix()).plan(sc, TEST);

        assertThat(PlanValidator.validate(sc, plan)).isEmpty();
        assertThat(plan.metadata()).containsKey(GreedyWhenAllFit.ALL_FIT);
        assertThat(plan.placements()).hasSize(sc.pending().size()).isEqualTo(fastPath.placements());
        assertThat(plan.metadata()).as("the solver never ran").doesNotContainKey("solverMillis");
    }

    @Test
    void aJobThatFitsOnlyByPreemptionGetsTheFullPlanner() {
        Scenario sc = TestScenarios.load("preemption");
        Plan plan = Planners.greedyWhenAllFit(Planners.byName("timefold", new WorkloadMix()), new WorkloadMix()).plan(sc, TEST);

        assertThat(PlanValidator.validate(sc, plan)).isEmpty();
        assertThat(plan.metadata()).doesNotContainKey(GreedyWhenAllFit.ALL_FIT);
        assertThat(plan.preemptions()).as("the solver preempted for the waiting job").isNotEmpty();
        assertThat(plan.placements()).hasSize(1);
    }
}
