package dev.gantry.placement.engine.forecast;

import static org.assertj.core.api.Assertions.assertThat;

import dev.gantry.placement.engine.domain.Node;
import dev.gantry.placement.engine.domain.PendingJob;
import dev.gantry.placement.engine.domain.Placement;
import dev.gantry.placement.engine.domain.Plan;
import dev.gantry.placement.engine.domain.Queue;
import dev.gantry.placement.engine.domain.RunningJob;
import dev.gantry.placement.engine.domain.RunningTask;
import dev.gantry.placement.engine.domain.Scenario;
import dev.gantry.placement.engine.domain.TaskGroup;
import dev.gantry.placement.engine.domain.TaskPlacement;
import dev.gantry.placement.engine.forecast.StartForecast.Basis;
import java.util.List;
import java.util.Map;
import java.util.function.ToLongFunction;
import org.junit.jupiter.api.Test;

/** The start-time forecast on 8-GPU nodes at t=1000, one queue, no limits. */
class StartForecasterTest {
    private static final long NOW = 1000;
    private static final StartForecaster FORECASTER = new StartForecaster(100, 86_400, 1000, 1);

    private static Node node(String name) {
        return new Node(name, "V100", 8, null, null, 64_000, 512_000, null, null, null, null, true, false);
    }

    private static RunningJob running(String name, String node, long startedAt, List<Integer> gpus) {
        return new RunningJob(name, "team", 0, false, false, false, startedAt,
                List.of(new RunningTask("w-0", node, gpus, 1000, 1000, null)));
    }

    private static PendingJob waiting(String name, int gpus, long submitted, Long runtime) {
        return new PendingJob(name, "team", 0, submitted, List.of(new TaskGroup("w", 1, gpus, 1000, 1000, null)), 1, null, null, null,
                false, null, null, false, false, runtime);
    }

    private static Scenario scenario(List<String> nodes, List<RunningJob> running, List<PendingJob> pending) {
        return new Scenario(Scenario.FORMAT, "forecast", NOW, nodes.stream().map(StartForecasterTest::node).toList(),
                List.of(new Queue("team", 1, 0, null, true, null)), running, pending);
    }

    private static ToLongFunction<String> ends(Map<String, Long> ends) {
        return job -> ends.getOrDefault(job, Long.MAX_VALUE);
    }

    private static final List<Integer> ALL = List.of(0, 1, 2, 3, 4, 5, 6, 7);

    @Test
    void aBlockedJobStartsWhenTheJobItWaitsForEnds() {
        Scenario sc = scenario(List.of("a"), List.of(running("r1", "a", 0, ALL)), List.of(waiting("head", 8, 10, 600L)));

        StartForecast f = FORECASTER.forecast(sc, null, ends(Map.of("r1", 2000L))).get("head");

        assertThat(f.startSeconds()).isEqualTo(2000L);
        assertThat(f.basis()).isEqualTo(Basis.RESERVATION);
        assertThat(f.waitsFor()).containsExactly("r1");
        assertThat(f.note()).isEqualTo("reserved: after 1 job ends");
    }

    @Test
    void theJobBehindTheHeadWaitsForTheHeadToEndToo() {
        Scenario sc = scenario(List.of("a"), List.of(running("r1", "a", 0, ALL)),
                List.of(waiting("head", 8, 10, 600L), waiting("second", 8, 20, 100L)));

        Map<String, StartForecast> f = FORECASTER.forecast(sc, null, ends(Map.of("r1", 2000L)));

        assertThat(f.get("second").startSeconds()).as("after the head's 600 s from 2000").isEqualTo(2600L);
        assertThat(f.get("second").basis()).isEqualTo(Basis.RELEASES);
        assertThat(f.get("second").waitsFor()).containsExactly("r1", "head");
    }

    @Test
    void aGangWaitingForTwoReleasesGetsTheLaterOne() {
        Scenario sc = scenario(List.of("a"), List.of(running("r1", "a", 0, List.of(0, 1, 2, 3)), running("r2", "a", 0, List.of(4, 5, 6, 7))),
                List.of(waiting("gang", 8, 10, 600L)));

        StartForecast f = FORECASTER.forecast(sc, null, ends(Map.of("r1", 2000L, "r2", 3000L))).get("gang");

        assertThat(f.startSeconds()).isEqualTo(3000L);
        assertThat(f.waitsFor()).containsExactly("r1", "r2");
    }

    @Test
    void aTwoNodeGangWaitsForTheLaterOfTheTwoNodesToFree() {
        PendingJob gang = new PendingJob("gang", "team", 0, 10, List.of(new TaskGroup("w", 2, 8, 1000, 1000, null)), 2, null, null, null,
                false, null, null, false, false, 600L);
        Scenario sc = scenario(List.of("a", "b"), List.of(running("on-a", "a", 0, ALL), running("on-b", "b", 0, ALL)), List.of(gang));

        StartForecast f = FORECASTER.forecast(sc, null, ends(Map.of("on-a", 5000L, "on-b", 1500L))).get("gang");

        assertThat(f.startSeconds()).isEqualTo(5000L);
        assertThat(f.waitsFor()).containsExactly("on-b", "on-a");
    }

    @Test
    void aRunningJobThatOverranItsEstimateIsTakenToEndATenthOfItsRuntimeFromNow() {
        // started at 100, expected to end at 1000 - 100 = 900: overran by 100 s; its runtime was 800 s
        Scenario sc = scenario(List.of("a"), List.of(running("late", "a", 100, ALL)), List.of(waiting("next", 8, 10, 600L)));

        StartForecast f = FORECASTER.forecast(sc, null, ends(Map.of("late", 900L))).get("next");

        assertThat(f.startSeconds()).isEqualTo(NOW + 80);
        assertThat(StartForecaster.overrunEnd(100, 900, NOW)).isEqualTo(NOW + 80);
        assertThat(StartForecaster.overrunEnd(100, 5000, NOW)).as("not overrun: as estimated").isEqualTo(5000);
    }

    @Test
    void aStartBeyondTheHorizonIsUnknown() {
        Scenario sc = scenario(List.of("a"), List.of(running("r1", "a", 0, ALL)), List.of(waiting("head", 8, 10, 600L)));
        StartForecaster oneHour = new StartForecaster(100, 3600, 1000, 1);

        StartForecast f = oneHour.forecast(sc, null, ends(Map.of("r1", NOW + 7200))).get("head");

        assertThat(f.startSeconds()).isNull();
        assertThat(f.basis()).isEqualTo(Basis.UNKNOWN);
        assertThat(f.note()).isEqualTo("unknown: not within the 1 h looked ahead");
    }

    @Test
    void behindAJobWithoutAnEstimateTheStartIsUnknown() {
        Scenario sc = scenario(List.of("a"), List.of(running("forever", "a", 0, ALL)), List.of(waiting("head", 8, 10, 600L)));

        StartForecast f = FORECASTER.forecast(sc, null, ends(Map.of())).get("head");

        assertThat(f.basis()).isEqualTo(Basis.UNKNOWN);
        assertThat(f.note()).contains("no job it waits behind has a runtime estimate");
    }

    @Test
    void onlyTheFirstJobsInLineAreForecast() {
        Scenario sc = scenario(List.of("a"), List.of(running("r1", "a", 0, ALL)),
                List.of(waiting("first", 8, 10, 60L), waiting("second", 8, 20, 60L), waiting("third", 8, 30, 60L)));
        StartForecaster two = new StartForecaster(2, 86_400, 1000, 1);

        Map<String, StartForecast> f = two.forecast(sc, null, ends(Map.of("r1", 2000L)));

        assertThat(f.get("first").startSeconds()).isEqualTo(2000L);
        assertThat(f.get("second").startSeconds()).isEqualTo(2060L);
        assertThat(f.get("third").basis()).isEqualTo(Basis.UNKNOWN);
        assertThat(f.get("third").note()).isEqualTo("unknown: more than 2 jobs ahead of it in line");
    }

    @Test
    void theWindowsPlanIsAppliedFirst() {
        // the plan places "small" now on GPUs 4-7 of a for 3000 s: "big" (8 GPUs) waits for it as well as for r1
        Scenario sc = scenario(List.of("a"), List.of(running("r1", "a", 0, List.of(0, 1, 2, 3))),
                List.of(waiting("small", 4, 5, 3000L), waiting("big", 8, 10, 600L)));
        Plan plan = new Plan(Plan.FORMAT, "forecast", List.of(new Placement("small", List.of(new TaskPlacement("w-0", "a", List.of(4, 5, 6, 7), null)))),
                List.of(), List.of(), List.of(), 0, Map.of());

        Map<String, StartForecast> f = FORECASTER.forecast(sc, plan, ends(Map.of("r1", 2000L)));

        assertThat(f).doesNotContainKey("small");
        assertThat(f.get("big").startSeconds()).isEqualTo(NOW + 3000);
        assertThat(f.get("big").waitsFor()).containsExactly("r1", "small");
    }

    @Test
    void aJobThatFitsNowIsForecastNow() {
        Scenario sc = scenario(List.of("a"), List.of(running("r1", "a", 0, List.of(0, 1, 2, 3))), List.of(waiting("fits", 4, 10, 600L)));

        StartForecast f = FORECASTER.forecast(sc, null, ends(Map.of("r1", 2000L))).get("fits");

        assertThat(f.startSeconds()).isEqualTo(NOW);
        assertThat(f.basis()).isEqualTo(Basis.NOW);
    }
}
