package dev.gantry.placement.engine.solver;

import ai.timefold.solver.core.preview.api.domain.metamodel.PlanningVariableMetaModel;
import ai.timefold.solver.core.preview.api.move.Move;
import ai.timefold.solver.core.preview.api.move.MutableSolutionView;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.SequencedCollection;

/**
 * Places one gang with a chosen option and, in the same move, moves every gang in its way to a
 * non-conflicting option of its own (or unplaces / preempts it). This is how a preemption comes
 * only with the placement it makes possible, and a migration only with the room it makes.
 */
public final class EvictAndPlaceMove implements Move<PlacementSolution> {
    private final List<GangAssignment> entities;
    private final List<PlacementOption> values;

    EvictAndPlaceMove(List<GangAssignment> entities, List<PlacementOption> values) {
        this.entities = List.copyOf(entities);
        this.values = new ArrayList<>(values); // values may be null (unplace / preempt)
    }

    @Override
    @SuppressWarnings("unchecked")
    public void execute(MutableSolutionView<PlacementSolution> view) {
        var variable = (PlanningVariableMetaModel<PlacementSolution, GangAssignment, PlacementOption>) (Object)
                view.getSolutionMetaModel().entity(GangAssignment.class).variable("option");
        for (int i = 0; i < entities.size(); i++) {
            view.changeVariable(variable, entities.get(i), values.get(i));
        }
    }

    @Override
    public SequencedCollection<Object> getPlanningEntities() {
        return List.copyOf(entities);
    }

    @Override
    public SequencedCollection<Object> getPlanningValues() {
        return values.stream().filter(Objects::nonNull).map(v -> (Object) v).toList();
    }

    @Override
    public String describe() {
        return "EvictAndPlace";
    }

    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder("EvictAndPlace{");
        for (int i = 0; i < entities.size(); i++) {
            sb.append(entities.get(i).getJob()).append("->").append(values.get(i) == null ? "none" : "#" + values.get(i).id()).append(' ');
        }
        return sb.append('}').toString();
    }
}
