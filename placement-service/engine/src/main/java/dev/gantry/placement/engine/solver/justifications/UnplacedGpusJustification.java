package dev.gantry.placement.engine.solver.justifications;

import ai.timefold.solver.core.api.score.stream.ConstraintJustification;

/** Pending GPUs left unplaced, weighted by priority and age. */
public record UnplacedGpusJustification(String job, long missingMilli, int priority, String description) implements ConstraintJustification {
}
