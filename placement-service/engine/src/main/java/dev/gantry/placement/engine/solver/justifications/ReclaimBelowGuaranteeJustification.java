package dev.gantry.placement.engine.solver.justifications;

import ai.timefold.solver.core.api.score.stream.ConstraintJustification;

/** Reclaim that leaves the victim's queue under its guarantee. */
public record ReclaimBelowGuaranteeJustification(String queue, long afterMilli, long floorMilli, String description) implements ConstraintJustification {
}
