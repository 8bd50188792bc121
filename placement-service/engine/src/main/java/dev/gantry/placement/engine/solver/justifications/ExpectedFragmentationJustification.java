package dev.gantry.placement.engine.solver.justifications;

import ai.timefold.solver.core.api.score.stream.ConstraintJustification;

/** How much a job's placement changes the free GPUs the window's workload could not use (milli-GPUs; negative frees). */
public record ExpectedFragmentationJustification(String job, long fragmentationMilli, String description) implements ConstraintJustification {
}
