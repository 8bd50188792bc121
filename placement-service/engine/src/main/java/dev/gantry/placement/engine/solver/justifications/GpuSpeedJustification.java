package dev.gantry.placement.engine.solver.justifications;

import ai.timefold.solver.core.api.score.stream.ConstraintJustification;

/** A job placed on GPUs slower than the fastest model ({@code slownessMilli}: GPU milli times slowness). */
public record GpuSpeedJustification(String job, long slownessMilli, String description) implements ConstraintJustification {
}
