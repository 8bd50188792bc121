package dev.gantry.placement.engine.solver.justifications;

import ai.timefold.solver.core.api.score.stream.ConstraintJustification;

/** A queue (children included) above its capability after the plan. */
public record QueueCapabilityJustification(String queue, long afterMilli, long limitMilli, String description) implements ConstraintJustification {
}
