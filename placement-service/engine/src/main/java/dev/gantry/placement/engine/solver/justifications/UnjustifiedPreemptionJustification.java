package dev.gantry.placement.engine.solver.justifications;

import ai.timefold.solver.core.api.score.stream.ConstraintJustification;

/** A victim with no higher-priority placement of its queue and no reclaim to justify it. */
public record UnjustifiedPreemptionJustification(String job, String queue, int priority, String description) implements ConstraintJustification {
}
