package dev.gantry.placement.window;

import static org.assertj.core.api.Assertions.assertThat;

import dev.gantry.contracts.jobs.JobQueued;
import dev.gantry.contracts.nodes.NodeInfo;
import dev.gantry.contracts.quota.QuotaShares;
import dev.gantry.placement.engine.domain.Plan;
import dev.gantry.placement.engine.domain.Queue;
import dev.gantry.placement.engine.domain.Scenario;
import dev.gantry.placement.engine.planner.Planners;
import dev.gantry.placement.engine.validation.PlanValidator;
import dev.gantry.placement.engine.validation.ScenarioValidator;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** Plain unit test (no Quarkus): state in placement's terms becomes a scenario the engine accepts. */
class ScenarioBuilderTest {

    private static QuotaShares.QueueShare share(String name, String parent, Integer capability) {
        return new QuotaShares.QueueShare(name, parent, 2, true, "open", 0, capability, null, 0, 0, 0, 0, 0, 1.0);
    }

    @Test
    void queuesComeFromTheSharesAndAJobOverItsCapabilityWaits() {
        NodeInfo node = new NodeInfo("n1", "A100", 8, List.of(), List.of(), false, 0, 0, null, null, Map.of(), List.of(), true,
                NodeInfo.Health.UNKNOWN, 0, null, 0, false, null);
        UUID small = UUID.randomUUID();
        UUID big = UUID.randomUUID();
        JobQueued.TaskGroup one = new JobQueued.TaskGroup("w", 1, 2, null, 1000, 1000);
        JobQueued.TaskGroup four = new JobQueued.TaskGroup("w", 1, 6, null, 1000, 1000);
        JobQueued a = new JobQueued(small, "a", "team-a", "u", 10, Instant.EPOCH, null, List.of(one), null, null, null, false, null,
                null, true, false, null);
        JobQueued b = new JobQueued(big, "b", "team-b", "u", 10, Instant.EPOCH, null, List.of(four), null, null, null, false, null,
                null, true, false, null);
        Scenario scenario = ScenarioBuilder.build(Instant.now(), List.of(node), List.of(), List.of(),
                List.of(new ScenarioBuilder.Waiting(small, a), new ScenarioBuilder.Waiting(big, b)),
                List.of(share("root", null, null), share("team-b", "root", 4), share("orphan", "gone", null)));

        assertThat(ScenarioValidator.validate(scenario)).isEmpty();
        assertThat(scenario.queues()).extracting(Queue::name).containsExactly("root", "team-b", "orphan", "team-a");
        assertThat(scenario.queues().get(1).capabilityGpus()).isEqualTo(4);
        assertThat(scenario.queues().get(2).parent()).isNull();
        assertThat(scenario.nodes().get(0).nvlinkIslands()).hasSize(8); // PCIe-only: one island per GPU

        Plan plan = Planners.byName("greedy").plan(scenario);
        assertThat(PlanValidator.validate(scenario, plan)).isEmpty();
        assertThat(plan.placements()).extracting(p -> p.job()).containsExactly(small.toString());
        assertThat(plan.unplaced()).extracting(u -> u.job()).containsExactly(big.toString());
    }
}
