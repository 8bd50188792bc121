package dev.gantry.placement.engine.solver;

import static dev.gantry.placement.engine.solver.SolverFixtures.N0;
import static dev.gantry.placement.engine.solver.SolverFixtures.Q;
import static dev.gantry.placement.engine.solver.SolverFixtures.pending;
import static dev.gantry.placement.engine.solver.SolverFixtures.place;
import static dev.gantry.placement.engine.solver.SolverFixtures.running;
import static org.assertj.core.api.Assertions.assertThat;

import ai.timefold.solver.core.api.domain.solution.ConstraintWeightOverrides;
import ai.timefold.solver.core.api.score.HardMediumSoftScore;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.List;
import org.junit.jupiter.api.Test;

class PlacementSolutionClonerTest {

    @Test
    void aCloneHasItsOwnEntitiesWithEveryFieldOfTheOriginal() throws IllegalAccessException {
        PlacementOption kept = place(N0, 0);
        PlacementOption placed = place(N0, 1, 2);
        GangAssignment job = pending("p", Q, 300, 2000, placed);
        GangAssignment run = running("r", Q, 100, true, kept, kept);
        PlacementSolution original = new PlacementSolution(List.of(job, run), ConstraintWeightOverrides.none());
        original.setScore(HardMediumSoftScore.of(0, -5, -7));

        PlacementSolution clone = new PlacementSolutionCloner().cloneSolution(original);

        assertThat(clone.getScore()).isEqualTo(original.getScore());
        assertThat(clone.getConstraintWeightOverrides()).isSameAs(original.getConstraintWeightOverrides());
        assertThat(clone.getAssignments()).hasSize(2);
        for (int i = 0; i < 2; i++) {
            GangAssignment o = original.getAssignments().get(i);
            GangAssignment c = clone.getAssignments().get(i);
            assertThat(c).isNotSameAs(o);
            // every field, so that one added later and left out of the copy fails here
            for (Field f : GangAssignment.class.getDeclaredFields()) {
                if (Modifier.isStatic(f.getModifiers())) {
                    continue;
                }
                f.setAccessible(true);
                assertThat(f.get(c)).as(f.getName()).isEqualTo(f.get(o));
            }
        }
        // the clone's variable is its own
        clone.getAssignments().getFirst().setOption(null);
        assertThat(job.getOption()).isSameAs(placed);
    }
}
