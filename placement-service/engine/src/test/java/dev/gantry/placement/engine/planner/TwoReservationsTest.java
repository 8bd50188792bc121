package dev.gantry.placement.engine.planner;

import static dev.gantry.placement.engine.planner.ReservationFixtures.node;
import static dev.gantry.placement.engine.planner.ReservationFixtures.running;
import static dev.gantry.placement.engine.planner.ReservationFixtures.waiting;
import static org.assertj.core.api.Assertions.assertThat;

import dev.gantry.placement.engine.domain.Placement;
import dev.gantry.placement.engine.domain.Plan;
import dev.gantry.placement.engine.domain.Queue;
import dev.gantry.placement.engine.domain.Scenario;
import dev.gantry.placement.engine.packing.EasyBackfill;
import dev.gantry.placement.engine.packing.EasyBackfill.Outcome;
import dev.gantry.placement.engine.packing.GangPacker;
import dev.gantry.placement.engine.validation.PlanValidator;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.ToLongFunction;
import org.junit.jupiter.api.Test;

/**
 * Two whole-node gangs wait; with one reservation (EASY) only the first is protected and long
 * one-GPU jobs take the free GPUs the second would get, with two both are.
 *
 * <p>The cluster at t=1000: node {@code a} has GPUs 0-3 held by {@code a-soon} (ends at 2000),
 * node {@code b} GPUs 0-3 held by {@code b-later} (ends at 3000); 4-7 free on both. Waiting,
 * oldest first: {@code gang-1} and {@code gang-2} (8 GPUs on one node, 3600 s), {@code short}
 * (1 GPU, ends at 1500), {@code medium} (1 GPU, ends at 2900: before b frees, after a does),
 * {@code long-1..3} (1 GPU, 10000 s). By hand: gang-1 fits on a once a-soon ends (2000); with a
 * held for it, gang-2 fits on b once b-later ends (3000).
 */
class TwoReservationsTest {
    private static final SolverProfile TEST = SolverProfile.FAST.withTimeLimit(Duration.ofSeconds(2));
    private static final long NOW = 1000;
    private static final Map<String, Long> RUNNING_ENDS = Map.of("a-soon", 2000L, "b-later", 3000L);
    private static final ToLongFunction<String> ESTIMATED_END = job -> RUNNING_ENDS.getOrDefault(job, Long.MAX_VALUE);

    private static Scenario twoGangs() {
        return new Scenario(Scenario.FORMAT, "two-gangs", NOW, List.of(node("a"), node("b")),
                List.of(new Queue("team", 1, 0, null, true, null)),
                List.of(running("a-soon", "a", List.of(0, 1, 2, 3)), running("b-later", "b", List.of(0, 1, 2, 3))),
                List.of(waiting("gang-1", 8, 0, 3600), waiting("gang-2", 8, 10, 3600), waiting("short", 1, 20, 500),
                        waiting("medium", 1, 30, 1900), waiting("long-1", 1, 40, 10_000), waiting("long-2", 1, 50, 10_000),
                        waiting("long-3", 1, 60, 10_000)));
    }

    private static List<String> jobsOn(Plan plan, String node) {
        return plan.placements().stream().filter(p -> p.tasks().stream().anyMatch(t -> t.node().equals(node))).map(Placement::job).toList();
    }

    /** Every waiting job but short, whose best fit is a tie between the nodes. */
    private static List<Outcome> offerAllButShort(Scenario sc, EasyBackfill easy) {
        return sc.pending().stream().filter(p -> !p.name().equals("short")).map(easy::offer).toList();
    }

    @Test
    void easyReservesForTheFirstGangOnlyAndLongJobsTakeTheSecondGangsNode() {
        Scenario sc = twoGangs();
        EasyBackfill easy = new EasyBackfill(sc, new GangPacker(sc.nodes()), ESTIMATED_END);
        // gang-1 reserved on a from 2000; gang-2 held back; medium and the long jobs take b's four free GPUs
        assertThat(offerAllButShort(sc, easy)).containsExactly(Outcome.RESERVED, Outcome.HELD_BACK, Outcome.STARTED, Outcome.STARTED,
                Outcome.STARTED, Outcome.STARTED);
        assertThat(easy.reservations()).extracting(r -> r.head() + "@" + r.start()).containsExactly("gang-1@2000");
    }

    @Test
    void twoReservationsHoldBothNodesAndOnlyJobsEndingInTimeUseTheirFreeGpus() {
        Scenario sc = twoGangs();
        EasyBackfill easy = new EasyBackfill(sc, new GangPacker(sc.nodes()), ESTIMATED_END, 2);
        // medium (ends 2900) may use b's free GPUs, reserved from 3000, not a's (from 2000); the long jobs neither
        assertThat(offerAllButShort(sc, easy)).containsExactly(Outcome.RESERVED, Outcome.RESERVED, Outcome.STARTED,
                Outcome.HELD_BACK, Outcome.HELD_BACK, Outcome.HELD_BACK);
        assertThat(easy.reservations()).extracting(r -> r.head() + "@" + r.start()).containsExactly("gang-1@2000", "gang-2@3000");
        assertThat(easy.reservations().get(1).gpus()).allSatisfy(a -> assertThat(a.node()).isEqualTo(1));
        assertThat(easy.lastFit().tasks()).allSatisfy(a -> assertThat(a.node()).as("medium on b").isEqualTo(1));
    }

    @Test
    void withOneReservationALongJobTakesAGpuTheSecondGangWaitsFor() {
        Scenario sc = twoGangs();
        Plan plan = new ReservingPlanner(new GreedyPlanner(), ESTIMATED_END).plan(sc, TEST);
        assertThat(PlanValidator.validate(sc, plan)).isEmpty();
        assertThat(plan.metadata()).containsEntry("reservation", "gang-1@2000");
        // short in a's free GPUs (it ends in time); medium and the long jobs on b's
        assertThat(jobsOn(plan, "a")).containsExactly("short");
        assertThat(jobsOn(plan, "b")).containsExactlyInAnyOrder("medium", "long-1", "long-2", "long-3");
    }

    @Test
    void withTwoReservationsNoLongJobStartsAndMediumUsesOnlyTheLaterHole() {
        Scenario sc = twoGangs();
        for (Planner inner : List.of(new GreedyPlanner(), Planners.byName("timefold"))) {
            Plan plan = new ReservingPlanner(inner, ESTIMATED_END, 2).plan(sc, TEST);
            assertThat(PlanValidator.validate(sc, plan)).isEmpty();
            assertThat(plan.metadata()).containsEntry("reservation", "gang-1@2000,gang-2@3000").containsEntry("startedInReservation", "2")
                    .containsEntry("reservedGpusFreeNow", "8");
            assertThat(plan.placements()).extracting(Placement::job).containsExactlyInAnyOrder("short", "medium");
            assertThat(jobsOn(plan, "b")).contains("medium");
            assertThat(plan.unplaced()).filteredOn(u -> u.job().equals("gang-2")).singleElement().asString().contains("reserved from t=3000");
        }
    }

    @Test
    void oneReservationIsTheDefault() {
        Scenario sc = twoGangs();
        Plan one = new ReservingPlanner(new GreedyPlanner(), ESTIMATED_END, 1).plan(sc, TEST);
        Plan dflt = new ReservingPlanner(new GreedyPlanner(), ESTIMATED_END).plan(sc, TEST);
        assertThat(one.placements()).isEqualTo(dflt.placements());
        assertThat(one.metadata().get("reservation")).isEqualTo(dflt.metadata().get("reservation"));
    }
}
