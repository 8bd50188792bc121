package dev.gantry.placement.engine.planner;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.gantry.placement.engine.TestScenarios;
import dev.gantry.placement.engine.domain.Migration;
import dev.gantry.placement.engine.domain.Plan;
import dev.gantry.placement.engine.domain.Scenario;
import dev.gantry.placement.engine.solver.MoveCost;
import dev.gantry.placement.engine.validation.PlanValidator;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The cost of a move is part of the solver profile: per move and per GPU moved. Fixture
 * {@code migration-cost-choice}: an 8-GPU job waits; node n0 holds one 4-GPU migratable job, n1 two
 * 1-GPU ones, and n2 has four GPUs free for whatever moves. Moving the 4-GPU job costs one move and
 * four GPUs; emptying n1 costs two moves and two GPUs. The profile's weights decide which.
 */
class MoveCostTest {

    private static final SolverProfile TEST = SolverProfile.FAST.withTimeLimit(Duration.ofSeconds(3));

    private static List<String> moved(SolverProfile profile) {
        Scenario sc = TestScenarios.load("migration-cost-choice");
        Plan p = Planners.byName("timefold").plan(sc, profile);
        assertThat(PlanValidator.validate(sc, p)).isEmpty();
        assertThat(p.placements()).as("the 8-GPU job is placed").hasSize(1);
        return p.migrations().stream().map(Migration::job).sorted().toList();
    }

    @Test
    void everyNamedProfileCarriesTheDefaultMoveCost() {
        for (SolverProfile p : List.of(SolverProfile.FAST, SolverProfile.BALANCED, SolverProfile.THOROUGH)) {
            assertThat(p.moveCost()).as(p.name()).isEqualTo(MoveCost.DEFAULT);
        }
        assertThat(MoveCost.DEFAULT.of(4000)).isEqualTo(1000 + 4 * 100);
        assertThat(SolverProfile.FAST.withMoveCost(new MoveCost(5, 7)).withTimeLimit(Duration.ofSeconds(1)).moveCost())
                .as("kept through the other withers").isEqualTo(new MoveCost(5, 7));
    }

    @Test
    void byDefaultOneMoveOfTheBiggerJobBeatsTwoMovesOfSmallOnes() {
        assertThat(moved(TEST)).containsExactly("big");
    }

    @Test
    void whenEachGpuMovedCostsMuchTheTwoSmallJobsMoveInstead() {
        assertThat(moved(TEST.withMoveCost(new MoveCost(0, 20_000)))).containsExactly("small-a", "small-b");
    }

    @Test
    void aMoveCostIsParsedAsPerMoveCommaPerGpuAndABadOneNamesTheFormat() {
        assertThat(MoveCost.parse("2000, 50")).isEqualTo(new MoveCost(2000, 50));
        assertThat(MoveCost.parse("")).isEqualTo(MoveCost.DEFAULT);
        assertThatThrownBy(() -> MoveCost.parse("1000")).hasMessageContaining("PER_MOVE,PER_GPU");
        assertThatThrownBy(() -> MoveCost.parse("a,b")).hasMessageContaining("whole numbers");
        assertThatThrownBy(() -> MoveCost.parse("-1,5")).hasMessageContaining("0 or more");
    }
}
