package dev.gantry.placement.engine.solver;

import ai.timefold.solver.core.api.domain.solution.ConstraintWeightOverrides;
import ai.timefold.solver.core.api.domain.solution.PlanningEntityCollectionProperty;
import ai.timefold.solver.core.api.domain.solution.PlanningScore;
import ai.timefold.solver.core.api.domain.solution.PlanningSolution;
import ai.timefold.solver.core.api.score.HardMediumSoftScore;
import java.util.List;

/** One window as Timefold sees it: the gang assignments and their score. */
@PlanningSolution(solutionCloner = PlacementSolutionCloner.class)
public class PlacementSolution {
    @PlanningEntityCollectionProperty
    private List<GangAssignment> assignments;

    @PlanningScore
    private HardMediumSoftScore score;

    private ConstraintWeightOverrides<HardMediumSoftScore> constraintWeightOverrides;

    public PlacementSolution() {
        // for Timefold's cloner
    }

    public PlacementSolution(List<GangAssignment> assignments, ConstraintWeightOverrides<HardMediumSoftScore> overrides) {
        this.assignments = assignments;
        this.constraintWeightOverrides = overrides;
    }

    public List<GangAssignment> getAssignments() {
        return assignments;
    }

    public HardMediumSoftScore getScore() {
        return score;
    }

    public void setScore(HardMediumSoftScore score) {
        this.score = score;
    }

    public ConstraintWeightOverrides<HardMediumSoftScore> getConstraintWeightOverrides() {
        return constraintWeightOverrides;
    }

    public void setConstraintWeightOverrides(ConstraintWeightOverrides<HardMediumSoftScore> constraintWeightOverrides) {
        this.constraintWeightOverrides = constraintWeightOverrides;
    }
}
