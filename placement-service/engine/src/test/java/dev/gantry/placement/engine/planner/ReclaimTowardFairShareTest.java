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
 * Issue 20, reclaim toward the deserved fair share (optional): team-a and team-b have equal weights
 * and no guarantee; team-a holds all 16 GPUs with preemptible priority-500 jobs, team-b asks for 8
 * GPUs at priority 100. Without the option team-b waits (no guarantee to restore, and a lower
 * priority). With it team-b is under its fair share (8 of 16) and team-a above its own, so team-b
 * reclaims 8 GPUs from team-a's most recently started job, and team-a keeps its fair share of 8.
 */
class ReclaimTowardFairShareTest {
    private static final SolverProfile TEST = SolverProfile.FAST.withTimeLimit(Duration.ofSeconds(3));
    private static final long NOW = 10_000;

    private static RunningJob teamA(String name, String node, long started) {
        return new RunningJob(name, "team-a", 500, true, false, false, started,
                List.of(new RunningTask("w-0", node, List.of(0, 1, 2, 3, 4, 5, 6, 7), 1000, 1000, null)));
    }

    private static PendingJob teamB(String name, int gpus) {
        return new PendingJob(name, "team-b", 100, NOW - 60, List.of(new TaskGroup("w", 1, gpus, 1000, 1000, null)), 1, null, null, null,
                false, null, null, true, true, 3600L);
    }

    private static Scenario trap(List<PendingJob> pending) {
        return new Scenario(Scenario.FORMAT, "reclaim-toward-fair-share", NOW, List.of(node("n1"), node("n2")),
                List.of(new Queue("team-a", 1, 0, null, true, null), new Queue("team-b", 1, 0, null, true, null)),
                List.of(teamA("a-old", "n1", NOW - 7200), teamA("a-new", "n2", NOW - 600)), pending);
    }

    @Test
    void withoutTheOptionTeamBWaits() {
        Scenario sc = trap(List.of(teamB("b-1", 8)));
        Plan plan = Planners.byName("timefold").plan(sc, TEST);
        assertThat(PlanValidator.validate(sc, plan)).isEmpty();
        assertThat(plan.preemptions()).isEmpty();
        assertThat(plan.placements()).isEmpty();
    }

    @Test
    void withTheOptionTeamBReclaimsItsFairShareFromTeamAsMostRecentlyStartedJob() {
        Scenario sc = trap(List.of(teamB("b-1", 8)));
        Plan plan = Planners.byName("timefold").plan(sc, TEST.withReclaimTowardFairShare(true));

        assertThat(PlanValidator.validate(sc, plan)).isEmpty();
        assertThat(plan.metadata()).doesNotContainKey("fallback");
        assertThat(plan.preemptions()).extracting(Preemption::job).as("team-a keeps 8 GPUs, its fair share").containsExactly("a-new");
        assertThat(plan.placements()).extracting(Placement::job).containsExactly("b-1");
        assertThat(plan.placements().getFirst().tasks()).allSatisfy(t -> assertThat(t.node()).isEqualTo("n2"));
    }

    @Test
    void reclaimNeverPushesTheVictimsQueueBelowItsFairShare() {
        // team-b asks for all 16 GPUs: its fair share is still 8, and team-a keeps its 8
        Scenario sc = trap(List.of(teamB("b-1", 8), teamB("b-2", 8)));
        Plan plan = Planners.byName("timefold").plan(sc, TEST.withReclaimTowardFairShare(true));

        assertThat(PlanValidator.validate(sc, plan)).isEmpty();
        assertThat(plan.preemptions()).hasSize(1);
        assertThat(plan.placements()).hasSize(1);
    }

    /** Configurable per queue tree: only the trees named (their root queues) reclaim toward their fair share. */
    @Test
    void onlyTheQueueTreesNamedReclaimTowardTheirFairShare() {
        Scenario sc = trap(List.of(teamB("b-1", 8)));
        SolverProfile on = TEST.withReclaimTowardFairShare(true);

        Plan teamBsTree = Planners.byName("timefold").plan(sc, on.withFairShareTrees(java.util.Set.of("team-b")));
        assertThat(PlanValidator.validate(sc, teamBsTree)).isEmpty();
        assertThat(teamBsTree.placements()).extracting(Placement::job).containsExactly("b-1");
        assertThat(teamBsTree.preemptions()).extracting(Preemption::job).containsExactly("a-new");

        Plan teamAsTree = Planners.byName("timefold").plan(sc, on.withFairShareTrees(java.util.Set.of("team-a")));
        assertThat(PlanValidator.validate(sc, teamAsTree)).isEmpty();
        assertThat(teamAsTree.placements()).as("team-b's tree is entitled to its guarantee (0) only").isEmpty();
        assertThat(teamAsTree.preemptions()).isEmpty();
    }

    @Test
    void theWaitingQueuesShareOfTheFallbackCheckCountsFairShares() {
        // the plan the option wants leaves no queue under its fair share; greedy's leaves team-b 8 GPUs under
        Scenario sc = trap(List.of(teamB("b-1", 8)));
        Plan greedy = Planners.byName("greedy").plan(sc, TEST);
        assertThat(GuaranteeShortfall.milli(sc, greedy)).isZero();
        assertThat(GuaranteeShortfall.milli(sc, greedy, true)).isEqualTo(8000);
    }
}
