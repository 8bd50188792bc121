package dev.gantry.placement.engine.solver.justifications;

import ai.timefold.solver.core.api.score.stream.ConstraintJustification;

/** A running job that is not preemptible was evicted. */
public record ProtectedPreemptionJustification(String job, String description) implements ConstraintJustification {
}
