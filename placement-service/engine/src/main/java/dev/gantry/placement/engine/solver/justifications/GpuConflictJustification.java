package dev.gantry.placement.engine.solver.justifications;

import ai.timefold.solver.core.api.score.stream.ConstraintJustification;

/** GPUs asked of one GPU beyond 1000 milli (a whole GPU counts 1000). */
public record GpuConflictJustification(String node, int gpu, long milli, String description) implements ConstraintJustification {
}
