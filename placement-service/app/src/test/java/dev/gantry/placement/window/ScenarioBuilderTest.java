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
    @Test
    void migDevicesOfNodesTasksAndRequestsBecomeTheEnginesAndAMigJobMayMoveToDevicesOfItsProfile() {
        NodeInfo.Mig mig = new NodeInfo.Mig("mixed", Map.of("1g.10gb", 2, "2g.20gb", 1), List.of(new NodeInfo.MigDevice("MIG-a", 1, "1g.10gb", null),
                new NodeInfo.MigDevice("MIG-b", 1, "1g.10gb", null), new NodeInfo.MigDevice("MIG-c", 1, "2g.20gb", "gpu-1-mig-2g20gb-14-2")));
        NodeInfo node = new NodeInfo("n1", "A100", 2, List.of(), List.of(), false, 0, 0, null, null, Map.of(), List.of(), true,
                NodeInfo.Health.READY, 0, mig, 0, false, null);
        UUID running = UUID.randomUUID();
        UUID waiting = UUID.randomUUID();
        JobQueued.TaskGroup nb = new JobQueued.TaskGroup("nb", 1, 1, null, 0, 0, null, null, null, null, "1g.10gb");
        JobQueued runningSpec = new JobQueued(running, "r", "q", "u", 10, Instant.EPOCH, null, List.of(nb), null, null, null, false, null,
                null, true, true, null, null, true);
        JobQueued waitingSpec = new JobQueued(waiting, "w", "q", "u", 10, Instant.EPOCH, null, List.of(nb), null, null, null, false, null,
                null, true, false, null);
        Scenario scenario = ScenarioBuilder.build(Instant.now(), List.of(node),
                List.of(new ScenarioBuilder.Placed(running, "q", runningSpec, Instant.EPOCH).withMovable(true)),
                List.of(new ScenarioBuilder.Held(running, "nb-0", "n1", List.of(), null, 0, 0, "1g.10gb", List.of("MIG-a"))),
                List.of(new ScenarioBuilder.Waiting(waiting, waitingSpec)));

        assertThat(ScenarioValidator.validate(scenario)).isEmpty();
        assertThat(scenario.nodes().getFirst().migDevices()).extracting(d -> d.id() + "@" + d.gpu() + ":" + d.profile())
                .containsExactly("MIG-a@1:1g.10gb", "MIG-b@1:1g.10gb", "MIG-c@1:2g.20gb");
        assertThat(scenario.running().getFirst().tasks().getFirst().migDevices()).containsExactly("MIG-a");
        assertThat(scenario.running().getFirst().migratable()).as("its spec asks and the budget allows: a move keeps its profile").isTrue();
        assertThat(scenario.pending().getFirst().taskGroups().getFirst().migProfile()).isEqualTo("1g.10gb");

        Plan plan = Planners.byName("greedy").plan(scenario);
        assertThat(PlanValidator.validate(scenario, plan)).isEmpty();
        assertThat(plan.placements().getFirst().tasks().getFirst().migDevices()).containsExactly("MIG-b");

        // moving to MIG-b: it holds MIG-a and MIG-b until the move is done, and is not offered another move
        ScenarioBuilder.Held target = new ScenarioBuilder.Held(running, "nb-0", "n1", List.of(), null, 0, 0, "1g.10gb", List.of("MIG-b"));
        Scenario moving = ScenarioBuilder.build(Instant.now(), List.of(node),
                List.of(new ScenarioBuilder.Placed(running, "q", runningSpec, Instant.EPOCH, null, null, List.of(target), true)),
                List.of(new ScenarioBuilder.Held(running, "nb-0", "n1", List.of(), null, 0, 0, "1g.10gb", List.of("MIG-a"))),
                List.of(new ScenarioBuilder.Waiting(waiting, waitingSpec)));
        assertThat(ScenarioValidator.validate(moving)).isEmpty();
        assertThat(moving.running().getFirst().migratable()).isFalse();
        assertThat(moving.running().getFirst().tasks()).extracting(t -> t.name() + ":" + t.migDevices())
                .containsExactlyInAnyOrder("nb-0:[MIG-a]", "nb-0-move-target:[MIG-b]");
        Plan whileMoving = Planners.byName("greedy").plan(moving);
        assertThat(whileMoving.placements()).as("both 1g.10gb devices are held").isEmpty();
    }

    @Test
    void aJobPlacedAgainAfterAPreemptionIsNoVictimUntilItsProtectionEnds() {
        NodeInfo node = new NodeInfo("n1", "A100", 8, List.of(), List.of(), false, 0, 0, null, null, Map.of(), List.of(), true,
                NodeInfo.Health.UNKNOWN, 0, null, 0, false, null);
        Instant now = Instant.parse("2026-12-02T12:00:00Z");
        UUID protectedJob = UUID.randomUUID();
        UUID plainJob = UUID.randomUUID();
        JobQueued.TaskGroup four = new JobQueued.TaskGroup("w", 1, 4, null, 1000, 1000);
        JobQueued p = new JobQueued(protectedJob, "p", "q", "u", 0, Instant.EPOCH, null, List.of(four), null, null, null, false, null,
                null, true, false, null);
        JobQueued o = new JobQueued(plainJob, "o", "q", "u", 0, Instant.EPOCH, null, List.of(four), null, null, null, false, null,
                null, true, false, null);
        List<ScenarioBuilder.Held> held = List.of(
                new ScenarioBuilder.Held(protectedJob, "w-0", "n1", List.of(0, 1, 2, 3), null, 1000, 1000),
                new ScenarioBuilder.Held(plainJob, "w-0", "n1", List.of(4, 5, 6, 7), null, 1000, 1000));

        Scenario during = ScenarioBuilder.build(now, List.of(node), List.of(
                new ScenarioBuilder.Placed(protectedJob, "q", p, now.minusSeconds(10), now.plusSeconds(60)),
                new ScenarioBuilder.Placed(plainJob, "q", o, now.minusSeconds(10))), held, List.of());
        assertThat(during.running()).filteredOn(r -> r.name().equals(protectedJob.toString()))
                .singleElement().extracting(r -> r.preemptible()).isEqualTo(false);
        assertThat(during.running()).filteredOn(r -> r.name().equals(plainJob.toString()))
                .singleElement().extracting(r -> r.preemptible()).isEqualTo(true);

        Scenario after = ScenarioBuilder.build(now.plusSeconds(61), List.of(node), List.of(
                new ScenarioBuilder.Placed(protectedJob, "q", p, now.minusSeconds(10), now.plusSeconds(60))), held, List.of());
        assertThat(after.running()).filteredOn(r -> r.name().equals(protectedJob.toString()))
                .singleElement().extracting(r -> r.preemptible()).isEqualTo(true);
    }
}
