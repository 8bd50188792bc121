package dev.gantry.placement.engine.planner;

import static org.assertj.core.api.Assertions.assertThat;

import dev.gantry.placement.engine.domain.Migration;
import dev.gantry.placement.engine.domain.Placement;
import dev.gantry.placement.engine.domain.Plan;
import dev.gantry.placement.engine.domain.Scenario;
import dev.gantry.placement.engine.json.ScenarioCodec;
import dev.gantry.placement.engine.validation.PlanValidator;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * A migratable job on a MIG device moves only to a free device of its own profile: node {@code a} has two 1g.10gb
 * devices, one held by the migratable {@code small}; node {@code b} has a 1g.10gb device (held by a pinned job, or
 * free) and a free 2g.20gb one. A pod asking for two 1g.10gb devices fits on {@code a} only once {@code small} moves.
 */
class MigMoveTest {
    private static final SolverProfile TEST = SolverProfile.FAST.withTimeLimit(Duration.ofSeconds(3));

    private static Scenario scenario(boolean bOneGFree) {
        String pinned = bOneGFree ? "" : """
                , {"name": "pinned", "queue": "q", "priority": 0, "preemptible": false, "startedAtSeconds": 0,
                   "tasks": [{"name": "srv-0", "node": "b", "gpus": [], "migProfile": "1g.10gb", "migDevices": ["b-1g"]}]}""";
        return ScenarioCodec.read("""
                {"format": "gantry-scenario/v1", "name": "mig-move", "nowSeconds": 100000,
                 "nodes": [
                   {"name": "a", "gpuModel": "A100-SXM4-80GB", "gpus": 1, "cpuMillis": 64000, "memoryMiB": 512000,
                    "migDevices": [{"id": "a-1g-0", "gpu": 0, "profile": "1g.10gb"}, {"id": "a-1g-1", "gpu": 0, "profile": "1g.10gb"}]},
                   {"name": "b", "gpuModel": "A100-SXM4-80GB", "gpus": 1, "cpuMillis": 64000, "memoryMiB": 512000,
                    "migDevices": [{"id": "b-1g", "gpu": 0, "profile": "1g.10gb"}, {"id": "b-2g", "gpu": 0, "profile": "2g.20gb"}]}],
                 "queues": [{"name": "q"}],
                 "running": [
                   {"name": "small", "queue": "q", "priority": 0, "preemptible": false, "checkpointable": true, "migratable": true,
                    "startedAtSeconds": 0,
                    "tasks": [{"name": "srv-0", "node": "a", "gpus": [], "migProfile": "1g.10gb", "migDevices": ["a-1g-0"]}]}%s],
                 "pending": [
                   {"name": "pair", "queue": "q", "priority": 0, "submittedAtSeconds": 0,
                    "taskGroups": [{"name": "srv", "replicas": 1, "gpusPerReplica": 2, "migProfile": "1g.10gb"}]}]}""".formatted(pinned));
    }

    @Test
    void theJobMovesToTheFreeDeviceOfItsProfileAndThePairTakesTheNodeItLeft() {
        Scenario sc = scenario(true);
        Plan plan = Planners.byName("timefold").plan(sc, TEST);
        assertThat(PlanValidator.validate(sc, plan)).isEmpty();
        assertThat(plan.migrations()).singleElement().satisfies((Migration m) -> {
            assertThat(m.job()).isEqualTo("small");
            assertThat(m.tasks()).singleElement().satisfies(t -> {
                assertThat(t.node()).isEqualTo("b");
                assertThat(t.migDevices()).as("1g.10gb, not the free 2g.20gb").containsExactly("b-1g");
                assertThat(t.gpus()).isEmpty();
            });
        });
        assertThat(plan.placements()).singleElement().satisfies((Placement p) ->
                assertThat(p.tasks().getFirst().migDevices()).containsExactlyInAnyOrder("a-1g-0", "a-1g-1"));
    }

    @Test
    void withOnlyADeviceOfAnotherProfileFreeItStays() {
        Scenario sc = scenario(false);
        Plan plan = Planners.byName("timefold").plan(sc, TEST);
        assertThat(PlanValidator.validate(sc, plan)).isEmpty();
        assertThat(plan.migrations()).as("the free 2g.20gb device is no place for a 1g.10gb task").isEmpty();
        assertThat(plan.placements()).isEmpty();
    }
}
