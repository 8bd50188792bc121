package dev.gantry.placement.engine.solver.justifications;

import ai.timefold.solver.core.api.score.stream.ConstraintJustification;

/** GPUs a queue holds above its deserved share. */
public record FairShareJustification(String queue, long afterMilli, long deservedMilli, String description) implements ConstraintJustification {
}
