package dev.gantry.placement.engine.solver;

import static org.assertj.core.api.Assertions.assertThat;

import dev.gantry.placement.engine.TestScenarios;
import dev.gantry.placement.engine.bench.ClusterGenerator;
import dev.gantry.placement.engine.domain.Plan;
import dev.gantry.placement.engine.domain.Scenario;
import dev.gantry.placement.engine.planner.SolverProfile;
import dev.gantry.placement.engine.planner.TimefoldPlanner;
import dev.gantry.placement.engine.validation.PlanValidator;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * FULL_ASSERT: Timefold recomputes the score from scratch after every move and compares it with
 * the incremental one, which catches score corruption in constraints and in the custom move.
 * Slow, so only with {@code -Dgantry.fullAssert=true}.
 */
@EnabledIfSystemProperty(named = TimefoldPlanner.FULL_ASSERT_PROPERTY, matches = "true")
class FullAssertTest {
    private static final SolverProfile PROFILE = SolverProfile.FAST.withTimeLimit(Duration.ofSeconds(3));

    @Test
    void examplesAndFixturesSolveWithoutScoreCorruption() {
        for (String name : new String[] {"frag-migrate-small", "type-flex", "seed-volcano-example", "preemption", "reclaim", "migration", "sharing"}) {
            Scenario sc = TestScenarios.load(name);
            Plan plan = new TimefoldPlanner().plan(sc, PROFILE);
            assertThat(PlanValidator.validate(sc, plan)).as(name).isEmpty();
            assertThat(plan.metadata()).as(name).doesNotContainKey("fallback");
        }
    }

    @Test
    void aGeneratedClusterSolvesWithoutScoreCorruption() {
        Scenario sc = ClusterGenerator.generate("full-assert", 24, 48, 0.7, 7);
        Plan plan = new TimefoldPlanner().plan(sc, PROFILE);
        assertThat(PlanValidator.validate(sc, plan)).isEmpty();
    }
}
