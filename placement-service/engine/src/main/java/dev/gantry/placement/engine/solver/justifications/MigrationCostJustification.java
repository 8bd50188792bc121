package dev.gantry.placement.engine.solver.justifications;

import ai.timefold.solver.core.api.score.stream.ConstraintJustification;

/** A running job moved: restart cost that the move must pay for. */
public record MigrationCostJustification(String job, int tasks, long gpuMilli, String description) implements ConstraintJustification {
}
