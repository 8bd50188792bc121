package dev.gantry.placement.engine.planner;

import static dev.gantry.placement.engine.planner.ReservationFixtures.node;
import static dev.gantry.placement.engine.planner.ReservationFixtures.running;
import static dev.gantry.placement.engine.planner.ReservationFixtures.waiting;
import static org.assertj.core.api.Assertions.assertThat;

import dev.gantry.placement.engine.domain.PendingJob;
import dev.gantry.placement.engine.domain.Placement;
import dev.gantry.placement.engine.domain.Plan;
import dev.gantry.placement.engine.domain.Queue;
import dev.gantry.placement.engine.domain.Scenario;
import dev.gantry.placement.engine.domain.TaskGroup;
import dev.gantry.placement.engine.domain.Unplaced;
import dev.gantry.placement.engine.validation.PlanValidator;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.ToLongFunction;
import org.junit.jupiter.api.Test;

/**
 * A whole-node gang at the head of the line, behind which a stream of one-GPU jobs keeps taking
 * the GPUs it waits for: with the reservation it gets the node as soon as the job running there
 * ends; a job that ends before then may still use the node's free GPUs, one that would outlast
 * it may not.
 *
 * <p>The cluster at t=1000: node {@code a} has GPUs 0-3 held by {@code ends-soon} (ends at 2000)
 * and 4-7 free; node {@code b} has GPUs 0-6 held by {@code ends-late} (ends at 50000) and GPU 7
 * free. Waiting, oldest first: {@code gang} (8 GPUs on one node), {@code short} (1 GPU, 500 s:
 * ends at 1500), {@code long-1..3} (1 GPU, 10000 s each).
 */
class ReservingPlannerTest {
    private static final SolverProfile TEST = SolverProfile.FAST.withTimeLimit(Duration.ofSeconds(3));
    private static final long NOW = 1000;
    private static final Map<String, Long> RUNNING_ENDS = Map.of("ends-soon", 2000L, "ends-late", 50_000L);
    private static final ToLongFunction<String> ESTIMATED_END = job -> RUNNING_ENDS.getOrDefault(job, Long.MAX_VALUE);

    private static Scenario headOfLineBlocked() {
        return new Scenario(Scenario.FORMAT, "head-of-line", NOW, List.of(node("a"), node("b")),
                List.of(new Queue("team", 1, 0, null, true, null)),
                List.of(running("ends-soon", "a", List.of(0, 1, 2, 3)), running("ends-late", "b", List.of(0, 1, 2, 3, 4, 5, 6))),
                List.of(waiting("gang", 8, 0, 3600), waiting("short", 1, 10, 500),
                        waiting("long-1", 1, 20, 10_000), waiting("long-2", 1, 30, 10_000), waiting("long-3", 1, 40, 10_000)));
    }

    private static List<String> jobsOn(Plan plan, String node) {
        return plan.placements().stream().filter(p -> p.tasks().stream().anyMatch(t -> t.node().equals(node))).map(Placement::job).toList();
    }

    @Test
    void withoutTheReservationLongJobsTakeTheGangsNode() {
        Scenario sc = headOfLineBlocked();
        Plan plan = Planners.byName("timefold").plan(sc, TEST);
        // the case this test is about: the gang would still not fit at t=2000
        assertThat(jobsOn(plan, "a")).anyMatch(job -> job.startsWith("long-"));
    }

    @Test
    void theGangIsReservedForAndOnlyAJobEndingInTimeUsesItsFreeGpus() {
        Scenario sc = headOfLineBlocked();
        Plan plan = new ReservingPlanner(Planners.byName("timefold"), ESTIMATED_END).plan(sc, TEST);

        assertThat(PlanValidator.validate(sc, plan)).isEmpty();
        assertThat(jobsOn(plan, "a")).as("only a job gone by t=2000 uses the gang's free GPUs").containsExactly("short");
        assertThat(jobsOn(plan, "b")).as("a long job still takes the GPU nobody reserved").singleElement().asString().startsWith("long-");
        assertThat(plan.metadata()).containsEntry("reservation", "gang@2000").containsEntry("startedInReservation", "1");
        assertThat(plan.unplaced()).filteredOn(u -> u.job().equals("gang")).singleElement()
                .extracting(Unplaced::reason).asString().contains("reserved from t=2000");
        assertThat(plan.placements().size() + plan.unplaced().size()).isEqualTo(sc.pending().size());
    }

    @Test
    void theLongestWaitingGangGetsTheReservationOverAYoungerOneOfSlightlyHigherPriority() {
        Scenario base = headOfLineBlocked();
        PendingJob old = waiting("old-gang", 8, NOW - 6 * 3600, 3600); // 6 h waited: 36 aging points
        PendingJob young = new PendingJob("young-gang", "team", 10, NOW, old.taskGroups(), 1, null, null, null, false, null, null,
                false, false, 3600L);
        Scenario sc = new Scenario(base.format(), base.name(), NOW, base.nodes(), base.queues(), base.running(), List.of(young, old));
        Plan plan = new ReservingPlanner(new GreedyPlanner(), ESTIMATED_END).plan(sc, TEST);
        assertThat(plan.metadata()).containsEntry("reservation", "old-gang@2000");
    }

    @Test
    void aJobBeforeTheHeadStillGetsTheGpusTheHeadIsReservedAfterIt() {
        // node b: GPU 7 free; node a wholly free. whole-node (8 GPUs) fits now and goes first; pair (2 GPUs,
        // long) then fits nowhere and is the head, reserved on a's GPUs from whole-node's end
        Scenario base = headOfLineBlocked();
        Scenario sc = new Scenario(base.format(), base.name(), NOW, base.nodes(), base.queues(), List.of(base.running().get(1)),
                List.of(waiting("whole-node", 8, 0, 100), waiting("pair", 2, 10, 10_000)));
        Plan plan = new ReservingPlanner(Planners.byName("timefold"), ESTIMATED_END).plan(sc, TEST);
        assertThat(plan.metadata()).containsEntry("reservation", "pair@1100");
        assertThat(jobsOn(plan, "a")).containsExactly("whole-node");
    }

    @Test
    void aShortGangTooWideForTheHoleAloneAlsoTakesFreeGpusOutsideIt() {
        // node a: GPUs 0-3 busy until 2000, 4-7 free (the hole: the gang is reserved on a from 2000);
        // node b: GPUs 0-3 busy for long, 4-7 free. short-wide (2 pods x 4 GPUs, ends at 1500) needs the
        // hole and b's free GPUs: it is gone before the gang starts, so it may start now on both
        Scenario base = headOfLineBlocked();
        PendingJob shortWide = new PendingJob("short-wide", "team", 0, 10, List.of(new TaskGroup("w", 2, 4, 1000, 1000, null)), 2,
                null, null, null, false, null, null, false, false, 500L);
        Scenario sc = new Scenario(base.format(), base.name(), NOW, base.nodes(), base.queues(),
                List.of(base.running().get(0), running("ends-late", "b", List.of(0, 1, 2, 3))),
                List.of(waiting("gang", 8, 0, 3600), shortWide));
        Plan plan = new ReservingPlanner(new GreedyPlanner(), ESTIMATED_END).plan(sc, TEST);

        assertThat(PlanValidator.validate(sc, plan)).isEmpty();
        assertThat(plan.metadata()).containsEntry("reservation", "gang@2000").containsEntry("startedInReservation", "1");
        assertThat(plan.placements()).singleElement().satisfies(p -> {
            assertThat(p.job()).isEqualTo("short-wide");
            assertThat(p.tasks()).extracting(t -> t.node() + ":" + t.gpus()).containsExactlyInAnyOrder("a:[4, 5, 6, 7]", "b:[4, 5, 6, 7]");
        });
    }

    @Test
    void withoutEstimatedEndsItIsTheWrappedPlanner() {
        Scenario sc = headOfLineBlocked();
        Plan wrapped = new GreedyPlanner().plan(sc, TEST);
        Plan reserving = new ReservingPlanner(new GreedyPlanner(), job -> Long.MAX_VALUE).plan(sc, TEST);
        assertThat(reserving.placements()).isEqualTo(wrapped.placements());
        assertThat(reserving.unplaced()).isEqualTo(wrapped.unplaced());
        assertThat(reserving.metadata()).doesNotContainKey("reservation");
    }
}
