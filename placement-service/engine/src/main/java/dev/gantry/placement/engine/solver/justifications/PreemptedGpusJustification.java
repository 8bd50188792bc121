package dev.gantry.placement.engine.solver.justifications;

import ai.timefold.solver.core.api.score.stream.ConstraintJustification;

/** Running GPUs evicted, weighted by the victim's priority. */
public record PreemptedGpusJustification(String job, long gpuMilli, int priority, String description) implements ConstraintJustification {
}
