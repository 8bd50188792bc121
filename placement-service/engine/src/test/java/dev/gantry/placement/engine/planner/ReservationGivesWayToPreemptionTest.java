package dev.gantry.placement.engine.planner;

import static dev.gantry.placement.engine.planner.ReservationFixtures.node;
import static org.assertj.core.api.Assertions.assertThat;

import dev.gantry.placement.engine.domain.PendingJob;
import dev.gantry.placement.engine.domain.Placement;
import dev.gantry.placement.engine.domain.Plan;
import dev.gantry.placement.engine.domain.Preemption;
import dev.gantry.placement.engine.domain.Queue;
import dev.gantry.placement.engine.domain.RunningJob;
import dev.gantry.placement.engine.domain.RunningTask;
import dev.gantry.placement.engine.domain.Scenario;
import dev.gantry.placement.engine.domain.TaskGroup;
import dev.gantry.placement.engine.packing.WorkloadMix;
import dev.gantry.placement.engine.validation.PlanValidator;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Seen with a real node agent (issue 21, NodeAgentIT): a priority-1000 job needing a whole 8-GPU node
 * waited behind a preemptible priority-0 job holding 4 of its GPUs until that job ended, every
 * window "0 placed, 0 preempted". The window plans inside EASY's reservation: the urgent job got a
 * reservation at the running job's estimated end, and the 4 GPUs free now were held for that
 * reservation, so no plan could place it by preemption (it needs them too). Work the planner can
 * place now by preempting (or moving) must not wait for its reservation; with the node full (no
 * free GPUs in the hole) it already did not.
 */
class ReservationGivesWayToPreemptionTest {
    // the composition is under test, not the solver's speed: the default 200 ms, halved for the direct plan, was
    // not always enough on a loaded 2-core machine (the direct plan then came back without the preemption)
    private static final SolverProfile TEST = SolverProfile.BALANCED;
    private static final long NOW = 10_000;

    private static Scenario scenario(boolean victimPreemptible) {
        RunningJob low = new RunningJob("checkpointing", "team", 0, victimPreemptible, true, false, NOW - 120,
                List.of(new RunningTask("w-0", "n1", List.of(0, 1, 2, 3), 1000, 1000, null))); // 4 GPUs free beside it
        PendingJob urgent = new PendingJob("urgent", "team", 1000, NOW - 30, List.of(new TaskGroup("w", 1, 8, 1000, 1000, null)), 1, null, null,
                null, false, null, null, true, true, 600L);
        return new Scenario(Scenario.FORMAT, "reservation-vs-preemption", NOW, List.of(node("n1")),
                List.of(new Queue("team", 1, 0, null, true, null)), List.of(low), List.of(urgent));
    }

    private static Plan windowPlan(Scenario sc) {
        // the service's composition: timefold inside one EASY reservation, the running job estimated to end in an hour
        Planner window = Planners.window("timefold", new WorkloadMix(), name -> NOW + 3600, 1);
        Plan plan = window.plan(sc, TEST);
        assertThat(PlanValidator.validate(sc, plan)).isEmpty();
        return plan;
    }

    @Test
    void theUrgentJobPreemptsTheLowPriorityOneRatherThanWaitForItsEnd() {
        Plan plan = windowPlan(scenario(true));
        assertThat(plan.preemptions()).extracting(Preemption::job).containsExactly("checkpointing");
        assertThat(plan.placements()).extracting(Placement::job).containsExactly("urgent");
    }

    @Test
    void whenNothingMayBePreemptedTheReservationStands() {
        Plan plan = windowPlan(scenario(false));
        assertThat(plan.preemptions()).isEmpty();
        assertThat(plan.placements()).isEmpty();
    }
}
