package dev.gantry.placement.engine.solver.justifications;

import ai.timefold.solver.core.api.score.stream.ConstraintJustification;

/** CPU asked of a node beyond what pinned work leaves. */
public record CpuCapacityJustification(String node, long usedMillis, long allocatableMillis, String description) implements ConstraintJustification {
}
