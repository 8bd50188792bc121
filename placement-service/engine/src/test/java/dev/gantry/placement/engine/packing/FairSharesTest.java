package dev.gantry.placement.engine.packing;

import static org.assertj.core.api.Assertions.assertThat;

import dev.gantry.placement.engine.domain.Node;
import dev.gantry.placement.engine.domain.PendingJob;
import dev.gantry.placement.engine.domain.Queue;
import dev.gantry.placement.engine.domain.RunningJob;
import dev.gantry.placement.engine.domain.RunningTask;
import dev.gantry.placement.engine.domain.Scenario;
import dev.gantry.placement.engine.domain.TaskGroup;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

class FairSharesTest {

    private static List<Node> nodes(int count) {
        return IntStream.range(0, count)
                .mapToObj(i -> new Node("n" + i, "V100", 8, null, null, 64_000, 512_000, null, null, null, null, true, false)).toList();
    }

    private static RunningJob running(String queue, int gpus) {
        return new RunningJob("r-" + queue + "-" + gpus, queue, 0, true, false, false, 0,
                List.of(new RunningTask("w-0", "n0", IntStream.range(0, gpus).boxed().toList(), 1000, 1000, null)));
    }

    private static PendingJob waiting(String queue, int gpus) {
        return new PendingJob("p-" + queue + "-" + gpus, queue, 0, 0, List.of(new TaskGroup("w", 1, gpus, 1000, 1000, null)), 1, null, null, null,
                false, null, null, true, true, null);
    }

    private static Scenario scenario(int nodes, List<Queue> queues, List<RunningJob> running, List<PendingJob> pending) {
        return new Scenario(Scenario.FORMAT, "fair", 0, nodes(nodes), queues, running, pending);
    }

    @Test
    void equalWeightsSplitTheClusterBetweenQueuesWithDemand() {
        Scenario sc = scenario(2, List.of(new Queue("a", 1, 0, null, true, null), new Queue("b", 1, 0, null, true, null),
                new Queue("idle", 1, 0, null, true, null)), List.of(running("a", 8), running("a", 8)), List.of(waiting("b", 8)));
        assertThat(FairShares.milli(sc)).containsEntry("a", 8000L).containsEntry("b", 8000L).containsEntry("idle", 0L);
    }

    @Test
    void weightsCapabilityAndDemandCapTheShareAndTheRestGoesToTheOthers() {
        Scenario sc = scenario(3, List.of(new Queue("a", 1, 0, null, true, null), new Queue("b", 2, 0, 6, true, null),
                new Queue("c", 1, 0, null, true, null)), List.of(), List.of(waiting("a", 24), waiting("b", 24), waiting("c", 2)));
        // 24 GPUs: c wants 2, b is capped at 6, a takes the rest
        assertThat(FairShares.milli(sc)).containsEntry("a", 16_000L).containsEntry("b", 6000L).containsEntry("c", 2000L);
    }

    @Test
    void guaranteesComeFirstThenWeights() {
        Scenario sc = scenario(2, List.of(new Queue("a", 1, 12, null, true, null), new Queue("b", 1, 0, null, true, null)),
                List.of(), List.of(waiting("a", 16), waiting("b", 16)));
        // a's guarantee of 12, then the 4 left split by weight
        assertThat(FairShares.milli(sc)).containsEntry("a", 14_000L).containsEntry("b", 2000L);
    }

    @Test
    void childrenShareTheirParentsShare() {
        Scenario sc = scenario(4, List.of(new Queue("org-1", 1, 0, null, true, null), new Queue("org-2", 1, 0, null, true, null),
                new Queue("team-x", 3, 0, null, true, "org-1"), new Queue("team-y", 1, 0, null, true, "org-1"),
                new Queue("team-z", 1, 0, null, true, "org-2")),
                List.of(), List.of(waiting("team-x", 32), waiting("team-y", 32), waiting("team-z", 32)));
        // 32 GPUs: each org 16; in org-1 weights 3:1
        assertThat(FairShares.milli(sc)).containsEntry("org-1", 0L).containsEntry("team-x", 12_000L).containsEntry("team-y", 4000L)
                .containsEntry("team-z", 16_000L);
    }

    @Test
    void onlyTheNamedTreesKeepTheirShareTheOthersAreEntitledToTheirGuaranteeOnly() {
        Scenario sc = scenario(4, List.of(new Queue("org-1", 1, 0, null, true, null), new Queue("org-2", 1, 0, null, true, null),
                new Queue("team-x", 3, 0, null, true, "org-1"), new Queue("team-y", 1, 0, null, true, "org-1"),
                new Queue("team-z", 1, 0, null, true, "org-2")),
                List.of(), List.of(waiting("team-x", 32), waiting("team-y", 32), waiting("team-z", 32)));
        assertThat(FairShares.milli(sc, java.util.Set.of("org-1"))).containsEntry("team-x", 12_000L).containsEntry("team-y", 4000L)
                .containsEntry("team-z", 0L);
        assertThat(FairShares.milli(sc, java.util.Set.of())).as("no tree named: every tree").containsEntry("team-z", 16_000L);
    }
}
