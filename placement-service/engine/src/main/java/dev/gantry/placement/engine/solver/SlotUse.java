package dev.gantry.placement.engine.solver;

/** An option's use of one GPU: 1000 for a whole GPU, or a sharing task's milli. */
public record SlotUse(GpuSlot slot, int milli) {
}
