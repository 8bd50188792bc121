package dev.gantry.placement.engine.solver.justifications;

import ai.timefold.solver.core.api.score.stream.ConstraintJustification;

/** A queue left under the part of its guarantee it can use. */
public record GuaranteeShortfallJustification(String queue, long heldMilli, long needMilli, String description) implements ConstraintJustification {
}
