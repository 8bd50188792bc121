package dev.gantry.placement.engine.planner;

import static dev.gantry.placement.engine.planner.ReservationFixtures.node;
import static dev.gantry.placement.engine.planner.ReservationFixtures.running;
import static dev.gantry.placement.engine.planner.ReservationFixtures.waiting;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.gantry.placement.engine.domain.PendingJob;
import dev.gantry.placement.engine.domain.Placement;
import dev.gantry.placement.engine.domain.Plan;
import dev.gantry.placement.engine.domain.Queue;
import dev.gantry.placement.engine.domain.Scenario;
import dev.gantry.placement.engine.packing.WorkloadMix;
import dev.gantry.placement.engine.validation.PlanValidator;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.ToLongFunction;
import org.junit.jupiter.api.Test;

/**
 * {@link Planners#window} and {@link Planners#fastPath(WorkloadMix, ToLongFunction, int)}: the
 * composition the placement service plans with (and the simulator's {@code timefold} policy).
 * The cluster at t=1000: node {@code a} has GPUs 0-3 held until 2000 and 4-7 free, node {@code b}
 * is full for long; a whole-node gang waits ahead of one-GPU jobs.
 */
class WindowCompositionTest {
    private static final SolverProfile TEST = SolverProfile.FAST.withTimeLimit(Duration.ofSeconds(3));
    private static final long NOW = 1000;
    private static final Map<String, Long> ENDS = Map.of("ends-soon", 2000L, "ends-late", 50_000L);
    private static final ToLongFunction<String> ESTIMATED_END = job -> ENDS.getOrDefault(job, Long.MAX_VALUE);

    private static Scenario gangAhead(PendingJob... behind) {
        List<PendingJob> pending = new java.util.ArrayList<>();
        pending.add(waiting("gang", 8, 0, 3600));
        pending.addAll(List.of(behind));
        return new Scenario(Scenario.FORMAT, "window", NOW, List.of(node("a"), node("b")), List.of(new Queue("team", 1, 0, null, true, null)),
                List.of(running("ends-soon", "a", List.of(0, 1, 2, 3)), running("ends-late", "b", List.of(0, 1, 2, 3, 4, 5, 6, 7))),
                pending);
    }

    private static List<String> placed(Plan plan) {
        return plan.placements().stream().map(Placement::job).toList();
    }

    @Test
    void noReservationsOrNoEstimatesIsThePlannerItself() {
        Planner greedy = new GreedyPlanner();
        assertThat(Planners.window(greedy, ESTIMATED_END, 0)).isSameAs(greedy);
        assertThat(Planners.window(greedy, null, 1)).isSameAs(greedy);
        assertThat(Planners.window(greedy, ESTIMATED_END, 2)).isInstanceOf(ReservingPlanner.class);
        assertThatThrownBy(() -> Planners.window(greedy, ESTIMATED_END, -1)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("reservations");
    }

    @Test
    void theWindowReservesForTheGangAndOnlyAJobEndingInTimeUsesItsFreeGpus() {
        Scenario sc = gangAhead(waiting("long", 1, 10, 10_000), waiting("short", 1, 20, 500));
        Plan plan = Planners.window("timefold", new WorkloadMix(), ESTIMATED_END, 1).plan(sc, TEST);
        assertThat(PlanValidator.validate(sc, plan)).isEmpty();
        assertThat(plan.metadata()).containsEntry("reservation", "gang@2000");
        assertThat(placed(plan)).containsExactly("short");
    }

    @Test
    void theFastPathDoesNotPlaceALoneArrivalThatWouldOutlastTheReservation() {
        // without reservations the fast path gives the gang's free GPUs to whoever fits now
        Scenario longOne = gangAhead(waiting("long", 1, 10, 10_000));
        assertThat(placed(Planners.fastPath(new WorkloadMix()).plan(longOne, TEST))).containsExactly("long");

        assertThat(placed(Planners.fastPath(new WorkloadMix(), ESTIMATED_END, 1).plan(longOne, TEST)))
                .as("it would hold a GPU of node a past t=2000, when the gang is to start there").isEmpty();
        Scenario shortOne = gangAhead(waiting("short", 1, 10, 500));
        Plan plan = Planners.fastPath(new WorkloadMix(), ESTIMATED_END, 1).plan(shortOne, TEST);
        assertThat(placed(plan)).as("gone by t=1500: it may use them").containsExactly("short");
        assertThat(PlanValidator.validate(shortOne, plan)).isEmpty();
    }
}
