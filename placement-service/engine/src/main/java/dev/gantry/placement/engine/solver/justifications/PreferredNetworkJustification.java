package dev.gantry.placement.engine.solver.justifications;

import ai.timefold.solver.core.api.score.stream.ConstraintJustification;

/** A gang placed outside its preferred network domain. */
public record PreferredNetworkJustification(String job, int nodes, String description) implements ConstraintJustification {
}
