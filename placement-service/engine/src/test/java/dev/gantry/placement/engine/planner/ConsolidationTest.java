package dev.gantry.placement.engine.planner;

import static org.assertj.core.api.Assertions.assertThat;

import dev.gantry.placement.engine.TestScenarios;
import dev.gantry.placement.engine.domain.GpuTopology;
import dev.gantry.placement.engine.domain.Migration;
import dev.gantry.placement.engine.domain.Node;
import dev.gantry.placement.engine.domain.PendingJob;
import dev.gantry.placement.engine.domain.RunningJob;
import dev.gantry.placement.engine.domain.RunningTask;
import dev.gantry.placement.engine.domain.Scenario;
import dev.gantry.placement.engine.domain.TaskGroup;
import dev.gantry.placement.engine.domain.TaskPlacement;
import dev.gantry.placement.engine.validation.PlanValidator;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * A consolidation pass with nothing waiting: moves that free a whole node (or an NVLink island)
 * for a shape that waited, or nothing when there is room already, too many moves are needed, or
 * no running job may move.
 */
class ConsolidationTest {

    private static final SolverProfile TEST = SolverProfile.FAST.withTimeLimit(Duration.ofSeconds(3));

    /** migration-two-moves without its waiting job: two 8-GPU nodes, each with two migratable 2-GPU jobs (4 + 4 GPUs free). */
    private static Scenario fragmented() {
        Scenario sc = TestScenarios.load("migration-two-moves");
        return new Scenario(sc.format(), sc.name(), sc.nowSeconds(), sc.nodes(), sc.queues(), sc.running(), List.of());
    }

    /** The shape of migration-two-moves' waiting job: one pod of 8 GPUs (it tolerates the nodes' taint). */
    private static PendingJob wholeNode() {
        return TestScenarios.load("migration-two-moves").pending().getFirst();
    }

    /** Nodes left with no running task once the moves are made. */
    private static Set<String> emptyAfter(Scenario sc, List<Migration> moves) {
        Set<String> busy = new HashSet<>();
        Set<String> moved = new HashSet<>();
        moves.forEach(m -> {
            moved.add(m.job());
            m.tasks().stream().map(TaskPlacement::node).forEach(busy::add);
        });
        sc.running().stream().filter(r -> !moved.contains(r.name())).forEach(r -> r.tasks().forEach(t -> busy.add(t.node())));
        Set<String> empty = new HashSet<>();
        sc.nodes().stream().map(Node::name).filter(n -> !busy.contains(n)).forEach(empty::add);
        return empty;
    }

    @Test
    void twoMovesFreeAWholeNodeForTheShapeThatWaited() {
        Scenario sc = fragmented();
        Consolidation.Outcome out = Consolidation.plan(sc, List.of(wholeNode()), Planners.byName("timefold"), TEST, 4);
        assertThat(out.plan().migrations()).as(out.reason()).hasSize(2);
        assertThat(out.plan().placements()).as("the stand-in is not a job").isEmpty();
        assertThat(out.plan().preemptions()).isEmpty();
        assertThat(PlanValidator.validate(sc, out.plan())).isEmpty();
        assertThat(emptyAfter(sc, out.plan().migrations())).hasSize(1);
        assertThat(out.reason()).contains("room for 1x8 GPUs").contains("by 2 move(s)");
        assertThat(out.shape()).isEqualTo(wholeNode());
    }

    @Test
    void aShapeThatFitsAlreadyMovesNobodyAndTheNextShapeGetsItsRoom() {
        Scenario sc = fragmented();
        PendingJob fourGpus = new PendingJob("four", "default", 0, 0, List.of(new TaskGroup("w", 1, 4, 1000, 4000, null)), 1, List.of(),
                GpuTopology.ANY, null, false, null, wholeNode().tolerations(), true, true, null);
        Consolidation.Outcome fits = Consolidation.plan(sc, List.of(fourGpus), Planners.byName("timefold"), TEST, 4);
        assertThat(fits.moves()).isFalse();
        assertThat(fits.reason()).isEqualTo("1x4 GPUs: room already");
        Consolidation.Outcome next = Consolidation.plan(sc, List.of(fourGpus, wholeNode()), Planners.byName("timefold"), TEST, 4);
        assertThat(next.plan().migrations()).hasSize(2);
        assertThat(next.reason()).startsWith("1x4 GPUs: room already; room for 1x8 GPUs");
    }

    @Test
    void nothingMovesWhenTheRoomTakesMoreMovesThanAllowed() {
        Consolidation.Outcome out = Consolidation.plan(fragmented(), List.of(wholeNode()), Planners.byName("timefold"), TEST, 1);
        assertThat(out.moves()).isFalse();
        assertThat(out.reason()).contains("needs 2 moves, at most 1");
    }

    @Test
    void nothingMovesWhenNoRunningJobMayMove() {
        Scenario sc = fragmented();
        List<RunningJob> held = sc.running().stream().map(r -> new RunningJob(r.name(), r.queue(), r.priority(), r.preemptible(),
                r.checkpointable(), false, r.startedAtSeconds(), r.tasks(), r.nodeSelector(), r.tolerations())).toList();
        Scenario noMoves = new Scenario(sc.format(), sc.name(), sc.nowSeconds(), sc.nodes(), sc.queues(), held, List.of());
        Consolidation.Outcome out = Consolidation.plan(noMoves, List.of(wholeNode()), Planners.byName("timefold"), TEST, 4);
        assertThat(out.moves()).isFalse();
        assertThat(out.reason()).isEqualTo("no running job may move now");
    }

    @Test
    void oneMoveFreesAnNvlinkIslandForAFourGpuPodThatNeedsOne() {
        // one node, two NVLink islands of four; a 1-GPU job in each island; a pod of 4 GPUs that must share an island
        Node node = new Node("island-0", "A100-SXM4-80GB", 8, List.of(List.of(0, 1, 2, 3), List.of(4, 5, 6, 7)), List.of(), 64_000,
                512_000, null, null, java.util.Map.of(), List.of(), true, false);
        Scenario base = fragmented();
        List<RunningJob> running = new ArrayList<>();
        for (int gpu : List.of(1, 6)) {
            running.add(new RunningJob("one-" + gpu, "default", 0, true, true, true, -3600,
                    List.of(new RunningTask("w-0", "island-0", List.of(gpu), 1000, 4000, null))));
        }
        Scenario sc = new Scenario(Scenario.FORMAT, "islands", 0, List.of(node), base.queues(), running, List.of());
        PendingJob island = new PendingJob("island", "default", 0, 0, List.of(new TaskGroup("w", 1, 4, 1000, 4000, null)), 1, List.of(),
                GpuTopology.NVLINK, null, false, null, List.of(), true, true, null);
        Consolidation.Outcome out = Consolidation.plan(sc, List.of(island), Planners.byName("timefold"), TEST, 4);
        assertThat(out.plan().migrations()).as(out.reason()).hasSize(1);
        Migration m = out.plan().migrations().getFirst();
        int from = m.job().equals("one-1") ? 1 : 6;
        int to = m.tasks().getFirst().gpus().getFirst();
        assertThat(to < 4).as("moved into the other island").isNotEqualTo(from < 4);
        assertThat(PlanValidator.validate(sc, out.plan())).isEmpty();
    }
}
