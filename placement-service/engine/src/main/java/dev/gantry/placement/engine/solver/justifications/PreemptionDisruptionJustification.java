package dev.gantry.placement.engine.solver.justifications;

import ai.timefold.solver.core.api.score.stream.ConstraintJustification;

/** The disruption of one eviction: a fixed cost, its size, lost work if not checkpointable. */
public record PreemptionDisruptionJustification(String job, long gpuMilli, boolean checkpointable, String description) implements ConstraintJustification {
}
