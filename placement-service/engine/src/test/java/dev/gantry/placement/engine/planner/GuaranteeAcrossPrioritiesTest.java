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
import dev.gantry.placement.engine.validation.PlanValidator;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Issue 20's second observation, a trap: queue team-a (guarantee 8, capability 16) holds both
 * 8-GPU nodes with jobs of priority 500 and 400; team-b (guarantee 8) waits with 8-GPU jobs of
 * priority 100. Preempting for a lower priority lowers priority-weighted GPUs, so a planner that
 * only weighs priorities leaves team-b under its guarantee while team-a borrows. Guarantees hold
 * across queues: team-b gets its 8 GPUs by reclaim, from team-a's lowest-priority job, and no more
 * (team-a keeps its own guarantee).
 */
class GuaranteeAcrossPrioritiesTest {
    private static final SolverProfile TEST = SolverProfile.FAST.withTimeLimit(Duration.ofSeconds(3));
    private static final long NOW = 10_000;

    private static RunningJob running(String name, String node, int priority) {
        return new RunningJob(name, "team-a", priority, true, true, false, NOW - 600,
                List.of(new RunningTask("w-0", node, List.of(0, 1, 2, 3, 4, 5, 6, 7), 1000, 1000, null)));
    }

    private static PendingJob waiting(String name, long submitted) {
        return new PendingJob(name, "team-b", 100, submitted, List.of(new TaskGroup("w", 1, 8, 1000, 1000, null)), 1, null, null, null,
                false, null, null, true, true, 3600L);
    }

    private static Scenario trap() {
        return new Scenario(Scenario.FORMAT, "guarantee-across-priorities", NOW, List.of(node("n1"), node("n2")),
                List.of(new Queue("team-a", 1, 8, 16, true, null), new Queue("team-b", 1, 8, 16, true, null)),
                List.of(running("a-500", "n1", 500), running("a-400", "n2", 400)),
                List.of(waiting("b-1", NOW - 60), waiting("b-2", NOW - 30)));
    }

    @Test
    void greedyLeavesTeamBUnderItsGuarantee() {
        Plan plan = Planners.byName("greedy").plan(trap(), TEST);
        assertThat(plan.placements()).isEmpty();
        assertThat(plan.preemptions()).isEmpty();
    }

    @Test
    void teamBReclaimsItsGuaranteeFromTeamAsLowestPriorityJobWhateverThePriorities() {
        Scenario sc = trap();
        Plan plan = Planners.byName("timefold").plan(sc, TEST);

        assertThat(PlanValidator.validate(sc, plan)).isEmpty();
        assertThat(plan.metadata()).doesNotContainKey("fallback");
        assertThat(plan.preemptions()).extracting(Preemption::job).as("the borrowing queue's lowest-priority job").containsExactly("a-400");
        assertThat(plan.placements()).extracting(Placement::job).as("the first in line of team-b, and only its guarantee")
                .containsExactly("b-1");
        assertThat(plan.placements().getFirst().tasks()).allSatisfy(t -> assertThat(t.node()).isEqualTo("n2"));
    }

    @Test
    void aQueueAtItsGuaranteeDoesNotReclaimForLowerPriority() {
        // team-b already holds its guarantee (a job on n2): its next job of priority 100 does not take team-a's GPUs
        Scenario base = trap();
        RunningJob bHolds = new RunningJob("b-0", "team-b", 100, true, true, false, NOW - 600,
                List.of(new RunningTask("w-0", "n2", List.of(0, 1, 2, 3, 4, 5, 6, 7), 1000, 1000, null)));
        Scenario sc = new Scenario(base.format(), base.name(), NOW, List.of(node("n1"), node("n2"), node("n3")),
                List.of(new Queue("team-a", 1, 8, 16, true, null), new Queue("team-b", 1, 8, 16, true, null)),
                List.of(base.running().get(0), new RunningJob("a-400", "team-a", 400, true, true, false, NOW - 600,
                        List.of(new RunningTask("w-0", "n3", List.of(0, 1, 2, 3, 4, 5, 6, 7), 1000, 1000, null))), bHolds),
                List.of(waiting("b-1", NOW - 60)));
        Plan plan = Planners.byName("timefold").plan(sc, TEST);
        assertThat(PlanValidator.validate(sc, plan)).isEmpty();
        assertThat(plan.preemptions()).isEmpty();
        assertThat(plan.placements()).isEmpty();
    }
}
