package dev.gantry.placement.engine.solver.justifications;

import ai.timefold.solver.core.api.score.stream.ConstraintJustification;

/** Memory asked of a node beyond what pinned work leaves. */
public record MemoryCapacityJustification(String node, long usedMiB, long allocatableMiB, String description) implements ConstraintJustification {
}
