package dev.gantry.placement.engine.solver.justifications;

import ai.timefold.solver.core.api.score.stream.ConstraintJustification;

/** Free GPUs stranded on a partly used node, and whole free nodes lost. */
public record FragmentationJustification(String node, long strandedMilli, boolean wholeNodeLost, String description) implements ConstraintJustification {
}
