package dev.gantry.placement.engine.planner;

import static dev.gantry.placement.engine.planner.ReservationFixtures.node;
import static dev.gantry.placement.engine.planner.ReservationFixtures.running;
import static org.assertj.core.api.Assertions.assertThat;

import dev.gantry.placement.engine.domain.PendingJob;
import dev.gantry.placement.engine.domain.Placement;
import dev.gantry.placement.engine.domain.Plan;
import dev.gantry.placement.engine.domain.Queue;
import dev.gantry.placement.engine.domain.Scenario;
import dev.gantry.placement.engine.domain.TaskGroup;
import dev.gantry.placement.engine.forecast.StartForecast;
import dev.gantry.placement.engine.forecast.StartForecaster;
import dev.gantry.placement.engine.validation.PlanValidator;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.ToLongFunction;
import org.junit.jupiter.api.Test;

/**
 * One queue's head must not leave another queue's head without a reservation (issue 20). Two
 * queues each have a whole-node gang waiting; with one reservation in all, vision's gang holds it
 * and speech's gang has none, so speech's own long one-GPU jobs take the GPUs its gang waits for
 * (the trap); with one reservation per queue both gangs are protected.
 *
 * <p>At t=1000: node {@code a} GPUs 0-3 held by {@code a-soon} (ends 2000), node {@code b} GPUs 0-3
 * by {@code b-later} (ends 3000), 4-7 free on both. Waiting, oldest first: {@code vision-gang} and
 * {@code vision-second} (vision, 8 GPUs on one node), {@code speech-gang} (speech, 8 GPUs), then
 * {@code long-1..3} (speech, 1 GPU, 10000 s).
 */
class PerQueueReservationTest {
    private static final SolverProfile TEST = SolverProfile.FAST.withTimeLimit(Duration.ofSeconds(2));
    private static final Map<String, Long> RUNNING_ENDS = Map.of("a-soon", 2000L, "b-later", 3000L);
    private static final ToLongFunction<String> ESTIMATED_END = job -> RUNNING_ENDS.getOrDefault(job, Long.MAX_VALUE);

    private static PendingJob waiting(String name, String queue, int gpus, long submitted, long runtime) {
        return new PendingJob(name, queue, 0, submitted, List.of(new TaskGroup("w", 1, gpus, 1000, 1000, null)), 1, null, null, null,
                false, null, null, false, false, runtime);
    }

    private static Scenario twoQueues() {
        return new Scenario(Scenario.FORMAT, "two-queues", 1000, List.of(node("a"), node("b")),
                List.of(new Queue("vision", 1, 0, null, true, null), new Queue("speech", 1, 0, null, true, null),
                        new Queue("team", 1, 0, null, true, null)),
                List.of(running("a-soon", "a", List.of(0, 1, 2, 3)), running("b-later", "b", List.of(0, 1, 2, 3))),
                List.of(waiting("vision-gang", "vision", 8, 0, 3600), waiting("vision-second", "vision", 8, 5, 3600),
                        waiting("speech-gang", "speech", 8, 10, 3600), waiting("long-1", "speech", 1, 40, 10_000),
                        waiting("long-2", "speech", 1, 50, 10_000), waiting("long-3", "speech", 1, 60, 10_000)));
    }

    private static List<String> jobsOn(Plan plan, String node) {
        return plan.placements().stream().filter(p -> p.tasks().stream().anyMatch(t -> t.node().equals(node))).map(Placement::job).toList();
    }

    @Test
    void withOneReservationInAllTheSecondQueuesGangIsLeftUnprotected() {
        Scenario sc = twoQueues();
        Plan plan = Planners.window(new GreedyPlanner(), ESTIMATED_END, 1, false).plan(sc, TEST);
        assertThat(plan.metadata()).containsEntry("reservation", "vision-gang@2000");
        // the trap: speech's long jobs take b's free GPUs, so speech-gang cannot start at 3000 when b-later ends
        assertThat(jobsOn(plan, "b")).containsExactlyInAnyOrder("long-1", "long-2", "long-3");
    }

    @Test
    void withOneReservationPerQueueEachQueuesHeadHasOne() {
        Scenario sc = twoQueues();
        Plan plan = Planners.window(new GreedyPlanner(), ESTIMATED_END, 1, true).plan(sc, TEST);
        assertThat(PlanValidator.validate(sc, plan)).isEmpty();
        // vision's second gang gets none: its queue has its one; speech's gang gets b from 3000
        assertThat(plan.metadata()).containsEntry("reservation", "vision-gang@2000,speech-gang@3000");
        assertThat(jobsOn(plan, "a")).isEmpty();
        assertThat(jobsOn(plan, "b")).as("nothing that outlasts 3000 takes b's free GPUs").isEmpty();
        assertThat(plan.unplaced()).filteredOn(u -> u.job().equals("speech-gang")).singleElement()
                .satisfies(u -> assertThat(u.reason()).contains("reserved from t=3000"));
    }

    /**
     * Without vision-second: speech-gang keeps its reservation on b from 3000 per queue. (With it,
     * the window at 2000 would give b to vision-second, older, once vision-gang has started and
     * left vision without a reservation; the reservations are made again in aged order each window.)
     */
    @Test
    void theForecastFollowsThePerQueueReservations() {
        Scenario all = twoQueues();
        Scenario sc = new Scenario(all.format(), all.name(), all.nowSeconds(), all.nodes(), all.queues(), all.running(),
                all.pending().stream().filter(p -> !p.name().equals("vision-second")).toList());
        Map<String, StartForecast> perQueue = new StartForecaster(100, 86_400, 1000, 1, true).forecast(sc, null, ESTIMATED_END);
        assertThat(perQueue.get("speech-gang").startSeconds()).isEqualTo(3000L);
        assertThat(perQueue.get("speech-gang").basis()).isEqualTo(StartForecast.Basis.RESERVATION);
        Map<String, StartForecast> inAll = new StartForecaster(100, 86_400, 1000, 1, false).forecast(sc, null, ESTIMATED_END);
        // in all: the long jobs take b until 11000, so speech-gang waits for a after vision-gang (2000 + 3600)
        assertThat(inAll.get("speech-gang").startSeconds()).isEqualTo(5600L);
        assertThat(inAll.get("speech-gang").basis()).isEqualTo(StartForecast.Basis.RELEASES);
        Map<String, StartForecast> displaced = new StartForecaster(100, 86_400, 1000, 1, true).forecast(all, null, ESTIMATED_END);
        assertThat(displaced.get("speech-gang").startSeconds()).isEqualTo(5600L);
        assertThat(displaced.get("speech-gang").basis()).as("not the reservation it has now").isEqualTo(StartForecast.Basis.RELEASES);
    }
}
