package dev.gantry.placement.engine.planner;

import static org.assertj.core.api.Assertions.assertThat;

import dev.gantry.placement.engine.TestScenarios;
import dev.gantry.placement.engine.domain.Migration;
import dev.gantry.placement.engine.domain.PendingJob;
import dev.gantry.placement.engine.domain.Plan;
import dev.gantry.placement.engine.domain.RunningJob;
import dev.gantry.placement.engine.domain.Scenario;
import dev.gantry.placement.engine.validation.PlanValidator;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Moves found without the solver. CI failed when a loaded machine left the FAST profile's solver
 * no time: it returned best fit's plan, which never moves, so the 8-GPU job of
 * migration-two-moves waited and a consolidation pass found "no moves make room". The planner
 * here stands for that solver: it may move work, but its plan is best fit's.
 */
class RoomByMovesTest {

    private static final SolverProfile TEST = SolverProfile.FAST.withTimeLimit(Duration.ofSeconds(3));

    /** A solver that ran out of time: its plan is best fit's, with no move. */
    private static final Planner OUT_OF_TIME = new Planner() {
        @Override
        public String name() {
            return "timefold";
        }

        @Override
        public boolean movesWork() {
            return true;
        }

        @Override
        public Plan plan(Scenario sc, SolverProfile profile) {
            return new GreedyPlanner().plan(sc, profile);
        }
    };

    private static Scenario twoMoves() {
        return TestScenarios.load("migration-two-moves");
    }

    /** Every running task's GPUs as node/gpu. */
    private static Set<String> oldGpus(Scenario sc) {
        Set<String> held = new HashSet<>();
        sc.running().forEach(r -> r.tasks().forEach(t -> t.gpus().forEach(g -> held.add(t.node() + "/" + g))));
        return held;
    }

    @Test
    void twoMovesMakeRoomForTheWholeNodeJob() {
        Scenario sc = twoMoves();
        Plan plan = RoomByMoves.find(sc, sc.pending().getFirst(), 4);
        assertThat(plan).isNotNull();
        assertThat(plan.migrations()).hasSize(2);
        assertThat(plan.placements()).singleElement().satisfies(p -> assertThat(p.job()).isEqualTo("whole-node"));
        assertThat(plan.preemptions()).isEmpty();
        assertThat(PlanValidator.validate(sc, plan)).isEmpty();
        // a moving job holds its old GPUs until it has stopped: no move goes onto another's
        Set<String> old = oldGpus(sc);
        for (Migration m : plan.migrations()) {
            m.tasks().forEach(t -> t.gpus().forEach(g -> assertThat(old).doesNotContain(t.node() + "/" + g)));
        }
    }

    @Test
    void oneMoveAllowedIsNotEnough() {
        Scenario sc = twoMoves();
        assertThat(RoomByMoves.find(sc, sc.pending().getFirst(), 1)).isNull();
    }

    @Test
    void nothingMigratableNothingFound() {
        Scenario sc = twoMoves();
        List<RunningJob> pinned = sc.running().stream()
                .map(r -> new RunningJob(r.name(), r.queue(), r.priority(), r.preemptible(), r.checkpointable(), false, r.startedAtSeconds(),
                        r.tasks(), r.nodeSelector(), r.tolerations()))
                .toList();
        Scenario still = new Scenario(sc.format(), sc.name(), sc.nowSeconds(), sc.nodes(), sc.queues(), pinned, sc.pending());
        assertThat(RoomByMoves.find(still, sc.pending().getFirst(), 4)).isNull();
    }

    @Test
    void theWindowPlacesTheHeadByMovesWhenTheSolverHadNoTime() {
        Scenario sc = twoMoves();
        Plan plan = new ReservingPlanner(OUT_OF_TIME, job -> sc.nowSeconds() + 3600).plan(sc, TEST);
        assertThat(plan.placements()).as(plan.metadata().toString()).extracting(p -> p.job()).containsExactly("whole-node");
        assertThat(plan.migrations()).hasSize(2);
        assertThat(plan.metadata()).containsKey("reservationSkipped");
        assertThat(PlanValidator.validate(sc, plan)).isEmpty();
    }

    @Test
    void bestFitAndFifoStayBaselinesThatNeverMove() {
        Scenario sc = twoMoves();
        Plan plan = new ReservingPlanner(new GreedyPlanner(), job -> sc.nowSeconds() + 3600).plan(sc, TEST);
        assertThat(plan.migrations()).isEmpty();
        assertThat(plan.placements()).isEmpty();
    }

    @Test
    void aConsolidationPassFindsItsMovesWhenTheSolverHadNoTime() {
        Scenario sc = twoMoves();
        Scenario idle = new Scenario(sc.format(), sc.name(), sc.nowSeconds(), sc.nodes(), sc.queues(), sc.running(), List.of());
        PendingJob wholeNode = sc.pending().getFirst();
        Consolidation.Outcome out = Consolidation.plan(idle, List.of(wholeNode), OUT_OF_TIME, TEST, 4);
        assertThat(out.reason()).contains("room for 1x8 GPUs").contains("by 2 move(s)");
        assertThat(out.plan().migrations()).hasSize(2);
        assertThat(out.plan().placements()).isEmpty();
        assertThat(PlanValidator.validate(idle, out.plan())).isEmpty();
    }
}
