package dev.gantry.placement.window;

import static org.assertj.core.api.Assertions.assertThat;

import dev.gantry.contracts.jobs.JobQueued;
import dev.gantry.placement.engine.domain.Scenario;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.ToLongFunction;
import org.junit.jupiter.api.Test;

/** The runtime estimates the window's reservations use (plain JUnit). */
class RuntimeEstimatesTest {

    private static JobQueued spec(String name, String owner, int replicas, int gpus, Long runtime) {
        return new JobQueued(UUID.randomUUID(), name, "team-a", owner, 100, Instant.EPOCH, null,
                List.of(new JobQueued.TaskGroup("worker", replicas, gpus, null, 1000, 4000)), null, null, null, false, Map.of(), List.of(),
                false, false, runtime);
    }

    @Test
    void ownEstimateScaledThenSameJobThenSameShapeThenTheDefault() {
        JobQueued train = spec("train", "ann", 1, 8, null);
        Map<String, Long> learned = Map.of(RuntimeEstimates.jobKey(train), 500L,
                RuntimeEstimates.shapeKey(spec("other", "ben", 1, 8, null)), 900L);
        RuntimeEstimates est = new RuntimeEstimates(0.01, Duration.ofHours(1), learned);

        assertThat(est.runtimeSeconds(spec("train", "ann", 1, 8, 800L))).as("its own, times the speed-up").isEqualTo(8);
        assertThat(est.runtimeSeconds(spec("train", "ann", 1, 8, 10L))).as("at least a second").isEqualTo(1);
        assertThat(est.runtimeSeconds(train)).as("same queue, owner and name").isEqualTo(500);
        assertThat(est.runtimeSeconds(spec("eval", "cat", 1, 8, null))).as("same queue and shape").isEqualTo(900);
        assertThat(est.runtimeSeconds(spec("eval", "cat", 2, 8, null))).as("nothing like it: the default").isEqualTo(3600);
    }

    @Test
    void theNinetiethPercentileOfPastRuntimes() {
        List<Long> runtimes = List.of(10L, 20L, 30L, 40L, 50L, 60L, 70L, 80L, 90L, 1000L);
        assertThat(RuntimeEstimates.percentile(runtimes, 0.9)).isEqualTo(90);
        assertThat(RuntimeEstimates.percentile(List.of(42L), 0.9)).isEqualTo(42);
        assertThat(RuntimeEstimates.percentile(List.of(), 0.9)).isNull();
    }

    @Test
    void aRunningJobEndsAtItsBindingPlusItsRuntimeAndOneThatOverranAlittleAfterNow() {
        RuntimeEstimates est = new RuntimeEstimates(1, Duration.ofHours(1), Map.of());
        Instant bound = Instant.ofEpochSecond(10_000);
        JobQueued hour = spec("train", "ann", 1, 8, 3600L);
        assertThat(est.end(bound, hour, 10_100)).isEqualTo(13_600);
        assertThat(est.end(bound, hour, 20_000)).as("overran: a tenth of its runtime from now").isEqualTo(20_360);
        assertThat(est.end(bound, spec("x", "ann", 1, 1, 5L), 20_000)).as("at least a second from now").isEqualTo(20_001);
        assertThat(est.end(bound, null, 10_100)).as("unknown spec: never").isEqualTo(Long.MAX_VALUE);

        UUID id = UUID.randomUUID();
        ToLongFunction<String> ends = est.ends(List.of(new ScenarioBuilder.Placed(id, "team-a", hour, bound)), 10_100);
        assertThat(ends.applyAsLong(id.toString())).isEqualTo(13_600);
        assertThat(ends.applyAsLong("someone-else")).isEqualTo(Long.MAX_VALUE);
    }

    @Test
    void theScenarioCarriesEveryWaitingJobsEstimate() {
        UUID withOwn = UUID.randomUUID();
        UUID without = UUID.randomUUID();
        List<ScenarioBuilder.Waiting> waiting = List.of(new ScenarioBuilder.Waiting(withOwn, spec("a", "ann", 1, 1, 120L)),
                new ScenarioBuilder.Waiting(without, spec("b", "ann", 1, 1, null)));
        Scenario sc = ScenarioBuilder.build(Instant.ofEpochSecond(1000), List.of(), List.of(), List.of(), waiting);
        Scenario estimated = new RuntimeEstimates(1, Duration.ofMinutes(30), Map.of()).withEstimates(sc, waiting);
        assertThat(estimated.pending()).extracting(p -> p.name() + "=" + p.estimatedRuntimeSeconds())
                .containsExactly(withOwn + "=120", without + "=1800");
    }
}
