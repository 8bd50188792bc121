package dev.gantry.placement.engine.planner;

import static org.assertj.core.api.Assertions.assertThat;

import dev.gantry.placement.engine.TestScenarios;
import dev.gantry.placement.engine.domain.Migration;
import dev.gantry.placement.engine.domain.Placement;
import dev.gantry.placement.engine.domain.Plan;
import dev.gantry.placement.engine.domain.Preemption;
import dev.gantry.placement.engine.domain.Scenario;
import dev.gantry.placement.engine.domain.TaskPlacement;
import dev.gantry.placement.engine.domain.Unplaced;
import dev.gantry.placement.engine.validation.PlanMetrics;
import dev.gantry.placement.engine.validation.PlanValidator;
import java.nio.file.Files;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Scenario files as fixtures (Volcano/KAI style): every planner's plan is valid, and each behaviour shows. */
class PlannerScenarioTest {
    static final List<String> FIXTURES = List.of("gang-min-available", "topology-leaf-ib", "preemption", "reclaim", "migration", "sharing", "unplaceable", "edge-mix",
            "trap-nvlink-pair", "trap-leaf", "trap-min-preemption", "fragmentation-models");
    /**
     * Windows where placing first in line by best fit (greedy) loses: the example traps, and ours
     * for fragmentation, NVLink pairs, one leaf, the fewest victims, reclaim and migration.
     */
    static final List<String> TRAPS = List.of("frag-migrate-small", "type-flex", "fragmentation-models", "trap-nvlink-pair", "trap-leaf",
            "trap-min-preemption", "preemption", "reclaim", "migration");

    /** Fast profile, but a deadline a loaded CI machine cannot miss; small windows stop early on the stall limit. */
    static final SolverProfile TEST = SolverProfile.FAST.withTimeLimit(java.time.Duration.ofSeconds(3));

    private static Plan plan(String planner, Scenario sc) {
        return Planners.byName(planner).plan(sc, TEST);
    }

    private static Placement placement(Plan p, String job) {
        return p.placements().stream().filter(x -> x.job().equals(job)).findFirst().orElseThrow(() -> new AssertionError(job + " not placed in " + p));
    }

    private static String reason(Plan p, String job) {
        return p.unplaced().stream().filter(u -> u.job().equals(job)).map(Unplaced::reason).findFirst().orElseThrow(() -> new AssertionError(job + " placed"));
    }

    static Stream<Arguments> everyScenarioAndPlanner() {
        return Stream.concat(TestScenarios.EXAMPLES.stream(), FIXTURES.stream())
                .flatMap(s -> Stream.of("timefold", "greedy", "fifo").map(p -> Arguments.of(s, p)));
    }

    @ParameterizedTest(name = "{0} by {1}")
    @MethodSource("everyScenarioAndPlanner")
    void everyPlanIsValidAndComplete(String scenario, String planner) {
        Scenario sc = TestScenarios.load(scenario);
        Plan p = plan(planner, sc);
        assertThat(PlanValidator.validate(sc, p)).isEmpty();
        assertThat(p.placements().size() + p.unplaced().size()).isEqualTo(sc.pending().size());
        assertThat(p.unplaced()).allSatisfy(u -> assertThat(u.reason()).isNotBlank());
        if (planner.equals("timefold")) {
            double greedy = PlanMetrics.of(sc, plan("greedy", sc)).netPriorityGpus();
            assertThat(PlanMetrics.of(sc, p).netPriorityGpus()).isGreaterThanOrEqualTo(greedy);
            if (TestScenarios.checkerAvailable()) {
                var verdict = TestScenarios.check(TestScenarios.json(scenario), p);
                assertThat(verdict.valid()).as(verdict.output()).isTrue();
            }
        }
    }

    @Test
    void sharedExamplesOutsideTheModuleSolveToValidPlans() throws Exception {
        if (!Files.isDirectory(TestScenarios.SHARED_EXAMPLES)) {
            return;
        }
        try (var files = Files.list(TestScenarios.SHARED_EXAMPLES)) {
            for (var f : files.filter(x -> x.toString().endsWith(".json")).toList()) {
                Scenario sc = dev.gantry.placement.engine.json.ScenarioCodec.read(f);
                assertThat(PlanValidator.validate(sc, plan("timefold", sc))).as(f.toString()).isEmpty();
            }
        }
    }

    @Test
    void timefoldMigratesToFitTheWholeNodeJob() {
        Scenario sc = TestScenarios.load("frag-migrate-small");
        Plan p = plan("timefold", sc);
        assertThat(placement(p, "whole-node").tasks()).singleElement().satisfies(t -> assertThat(t.gpus()).hasSize(8));
        assertThat(p.migrations()).hasSize(1);
        assertThat(p.preemptions()).isEmpty();
        assertThat(PlanMetrics.of(sc, p).netPriorityGpus()).isGreaterThan(PlanMetrics.of(sc, plan("greedy", sc)).netPriorityGpus());
    }

    @Test
    void timefoldSendsTheFlexibleJobToV100() {
        Scenario sc = TestScenarios.load("type-flex");
        Plan p = plan("timefold", sc);
        assertThat(placement(p, "flexible-0").tasks().getFirst().node()).isEqualTo("v100-00");
        assertThat(placement(p, "a100-only-0").tasks().getFirst().node()).isEqualTo("a100-00");
        assertThat(PlanMetrics.of(sc, p).netPriorityGpus()).isGreaterThan(PlanMetrics.of(sc, plan("greedy", sc)).netPriorityGpus());
    }

    @Test
    void gangPlacesAtLeastMinAvailableOrNothing() {
        Scenario sc = TestScenarios.load("gang-min-available");
        for (String planner : List.of("greedy", "timefold")) {
            Plan p = plan(planner, sc);
            assertThat(placement(p, "elastic").tasks()).hasSize(2).allSatisfy(t -> assertThat(t.node()).isEqualTo("n0"));
            assertThat(reason(p, "rigid")).startsWith("gang needs 8 GPUs; the eligible nodes have 1 free");
        }
    }

    @Test
    void topologyKeepsTheGangUnderOneLeafAndFabricAndTheReplicaInOneNumaNode() {
        Scenario sc = TestScenarios.load("topology-leaf-ib");
        for (String planner : List.of("greedy", "timefold")) {
            Plan p = plan(planner, sc);
            assertThat(placement(p, "two-node").tasks()).extracting(TaskPlacement::node).containsExactlyInAnyOrder("b0", "b1");
            List<Integer> gpus = placement(p, "numa-half").tasks().getFirst().gpus();
            assertThat(gpus.stream().allMatch(g -> g < 4) || gpus.stream().allMatch(g -> g >= 4)).as(gpus.toString()).isTrue();
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("traps")
    void timefoldIsStrictlyBetterThanGreedyOnEveryTrap(String scenario) {
        Scenario sc = TestScenarios.load(scenario);
        Plan p = plan("timefold", sc);
        assertThat(PlanValidator.validate(sc, p)).isEmpty();
        assertThat(PlanMetrics.of(sc, p).netPriorityGpus()).isGreaterThan(PlanMetrics.of(sc, plan("greedy", sc)).netPriorityGpus());
    }

    static Stream<String> traps() {
        return TRAPS.stream();
    }

    @Test
    void theFirstInLineLeavesTheNvlinkPairToTheJobThatNeedsOne() {
        Scenario sc = TestScenarios.load("trap-nvlink-pair");
        assertThat(plan("greedy", sc).unplaced()).extracting(Unplaced::job).containsExactly("nvlink-pair");
        Plan p = plan("timefold", sc);
        assertThat(placement(p, "any-two").tasks().getFirst().node()).isEqualTo("v100-q");
        assertThat(placement(p, "nvlink-pair").tasks().getFirst().gpus()).containsExactly(0, 1);
    }

    @Test
    void theSmallJobLeavesTheOnlyLeafWithRoomToTheGang() {
        Scenario sc = TestScenarios.load("trap-leaf");
        assertThat(plan("greedy", sc).unplaced()).extracting(Unplaced::job).containsExactly("leaf-gang");
        Plan p = plan("timefold", sc);
        assertThat(placement(p, "single-four").tasks().getFirst().node()).isEqualTo("l2-a");
        assertThat(placement(p, "leaf-gang").tasks()).extracting(TaskPlacement::node).allMatch(n -> n.startsWith("l1-"));
    }

    @Test
    void oneWholeVictimIsPreemptedRatherThanFourSmallOnes() {
        Scenario sc = TestScenarios.load("trap-min-preemption");
        Plan p = plan("timefold", sc);
        assertThat(p.preemptions()).extracting(Preemption::job).containsExactly("whole");
        assertThat(placement(p, "urgent").tasks().getFirst().node()).isEqualTo("one");
    }

    @Test
    void preemptionComesWithThePlacementItMakesPossible() {
        Scenario sc = TestScenarios.load("preemption");
        assertThat(plan("greedy", sc).placements()).isEmpty();
        Plan p = plan("timefold", sc);
        assertThat(p.preemptions()).extracting(Preemption::job).containsExactly("low-old");
        assertThat(p.preemptions().getFirst().reason()).contains("urgent").contains("1000 > 0");
        assertThat(placement(p, "urgent").tasks().getFirst().gpus()).hasSize(8);
    }

    @Test
    void aWaitingGangIsToldWhoTakesItsBestPlacement() {
        String json = TestScenarios.json("preemption").replace("\"pending\": [", """
                "pending": [
                    {"name": "second", "queue": "research", "priority": 500, "submittedAtSeconds": -5,
                     "taskGroups": [{"name": "worker", "replicas": 1, "gpusPerReplica": 8, "cpuMillis": 8000, "memoryMiB": 64000}]},""");
        Scenario sc = dev.gantry.placement.engine.json.ScenarioCodec.read(json);
        Plan p = plan("timefold", sc);
        assertThat(placement(p, "urgent").tasks()).hasSize(1);
        assertThat(reason(p, "second")).endsWith("its best placement (n0) is taken by urgent (placed now, priority 1000)");
    }

    @Test
    void reclaimTakesOnlyWhatTheOwnerNeeds() {
        Scenario sc = TestScenarios.load("reclaim");
        Plan p = plan("timefold", sc);
        assertThat(placement(p, "owner-job").tasks().getFirst().gpus()).hasSize(6);
        assertThat(p.preemptions()).extracting(Preemption::job).containsExactly("borrower");
        assertThat(p.preemptions().getFirst().reason()).startsWith("reclaimed by owner-job of queue owner");
    }

    @Test
    void timefoldEmptiesANodeByMovingTwoSmallJobsTogether() {
        // two 8-GPU nodes, 4 + 4 GPUs free between four migratable 2-GPU jobs: the 8-GPU job needs two moves at once
        Scenario sc = TestScenarios.load("migration-two-moves");
        assertThat(plan("greedy", sc).placements()).isEmpty();
        Plan p = plan("timefold", sc);
        assertThat(placement(p, "whole-node").tasks()).singleElement().satisfies(t -> assertThat(t.gpus()).hasSize(8));
        assertThat(p.migrations()).hasSize(2);
        String emptied = placement(p, "whole-node").tasks().getFirst().node();
        assertThat(p.migrations()).allSatisfy(m -> assertThat(m.tasks().getFirst().node()).isNotEqualTo(emptied));
        assertThat(p.preemptions()).isEmpty();
        assertThat(PlanValidator.validate(sc, p)).isEmpty();
    }

    @Test
    void aHeadOfTheLineThatMovesCanPlaceIsPlacedNowNotReserved() {
        // the window wraps the solver in EASY reservations: a head that does not fit without moves must still get them
        Scenario sc = TestScenarios.load("migration-two-moves");
        Plan p = new ReservingPlanner(Planners.byName("timefold"), job -> sc.nowSeconds() + 3600).plan(sc, TEST);
        assertThat(placement(p, "whole-node").tasks()).singleElement().satisfies(t -> assertThat(t.gpus()).hasSize(8));
        assertThat(p.migrations()).hasSize(2);
        assertThat(p.metadata()).containsKey("reservationSkipped");
        assertThat(PlanValidator.validate(sc, p)).isEmpty();
    }

    @Test
    void migrationMakesRoomOnlyForAJobThatNeedsIt() {
        Scenario sc = TestScenarios.load("migration");
        assertThat(plan("greedy", sc).placements()).isEmpty();
        Plan p = plan("timefold", sc);
        assertThat(p.migrations()).extracting(Migration::job).containsExactly("mover");
        assertThat(p.migrations().getFirst().tasks().getFirst().node()).isEqualTo("n1");
        assertThat(placement(p, "four-gpu").tasks().getFirst().node()).isEqualTo("n0");
    }

    @Test
    void sharingTasksFillASharedGpuBeforeOpeningAnother() {
        Scenario sc = TestScenarios.load("sharing");
        for (String planner : List.of("greedy", "timefold")) {
            Plan p = plan(planner, sc);
            List<TaskPlacement> tasks = placement(p, "model-b").tasks();
            assertThat(tasks).allSatisfy(t -> {
                assertThat(t.node()).isEqualTo("inf-0");
                assertThat(t.gpuMilli()).isEqualTo(400);
            });
            assertThat(tasks.stream().filter(t -> t.gpus().equals(List.of(0)))).hasSize(1);
            assertThat(tasks.stream().filter(t -> t.gpus().equals(List.of(1)))).hasSize(2);
            assertThat(placement(p, "whole").tasks().getFirst().node()).isEqualTo("train-0");
        }
    }

    @Test
    void reasonsNameTheBlockingRequirementAndByHowMuch() {
        Scenario sc = TestScenarios.load("unplaceable");
        for (String planner : List.of("greedy", "timefold")) {
            Plan p = plan(planner, sc);
            assertThat(p.placements()).isEmpty();
            assertThat(reason(p, "wants-h100")).isEqualTo("no schedulable node has GPU model H100-SXM5-80GB (the cluster has A100-SXM4-80GB, V100-PCIE-32GB)");
            assertThat(reason(p, "wants-label")).startsWith("nodeSelector {pool=interactive} matches none of the 3 schedulable nodes");
            assertThat(reason(p, "no-toleration")).contains("NoSchedule taint").contains("dedicated=batch").contains("add a toleration");
            assertThat(reason(p, "big-island")).contains("needs 4 GPUs in one NVLink island; the largest island").contains("has 2");
            assertThat(reason(p, "over-quota")).startsWith("queue tiny is at its capability: it holds 0 of 2 GPUs and the gang needs 4 more");
            assertThat(reason(p, "leaf-too-small")).isEqualTo("gang needs 24 x A100-SXM4-80GB GPUs under one leaf; the best leaf has 8 free");
        }
    }

    @Test
    void weightOverridesApplyToSoftAndMediumAndRejectHard() {
        Scenario sc = TestScenarios.load("frag-migrate-small");
        // migrations made free: still valid, still places the whole-node job
        Plan p = Planners.byName("timefold").plan(sc, TEST.withWeightOverrides(
                java.util.Map.of(dev.gantry.placement.engine.solver.PlacementConstraintProvider.MIGRATION_COST, 0L)));
        assertThat(PlanValidator.validate(sc, p)).isEmpty();
        assertThat(placement(p, "whole-node").tasks()).hasSize(1);
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> Planners.byName("timefold").plan(sc, TEST.withWeightOverrides(
                        java.util.Map.of(dev.gantry.placement.engine.solver.PlacementConstraintProvider.CPU_CAPACITY, 1L))))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("constraint \"CPU over allocatable\" is hard (a validity rule) and cannot be overridden");
    }

    @Test
    void hierarchicalCapabilityCountsChildrenAndCpuOnlyPodsTravelWithTheGang() {
        // edge-mix: org (capability 6) over t1 and t2; a 0-GPU driver pod, an unschedulable node,
        // a tainted node with a selector, sharing on a node with one NVLink island of two
        Scenario sc = TestScenarios.load("edge-mix");
        for (String planner : List.of("greedy", "timefold")) {
            Plan p = plan(planner, sc);
            assertThat(placement(p, "big").tasks().getFirst().node()).isEqualTo("gpu-0");
            assertThat(placement(p, "share").tasks()).allSatisfy(t -> assertThat(t.node()).isEqualTo("gpu-2"));
            assertThat(reason(p, "etl")).isEqualTo("queue org is at its capability: it holds 6 of 6 GPUs and the gang needs 4 more");
            assertThat(p.placements()).extracting(Placement::tasks).flatMap(t -> t).extracting(TaskPlacement::node)
                    .doesNotContain("gpu-1", "cpu-0");
        }
    }

    @Test
    void fifoStopsAtTheFirstJobThatDoesNotFit() {
        Scenario sc = TestScenarios.load("type-flex");
        Plan p = plan("fifo", sc);
        // flexible-0 (older) takes the A100 first; a100-only-0 is next and does not fit
        assertThat(placement(p, "flexible-0").tasks()).hasSize(1);
        assertThat(reason(p, "a100-only-0")).startsWith("gang needs 8 x A100-SXM4-80GB GPUs");
        Scenario rnd = TestScenarios.load("random-64-nodes");
        Plan fifo = plan("fifo", rnd);
        String blocker = fifo.unplaced().stream().map(Unplaced::reason).filter(r -> r.startsWith("blocked behind ")).findFirst().orElseThrow()
                .substring("blocked behind ".length());
        assertThat(fifo.unplaced()).extracting(Unplaced::job).contains(blocker);
    }
}
