package dev.gantry.placement.engine.solver;

import java.util.List;

/**
 * One complete way to place a gang (or keep / move a running job): every pod with its node and
 * GPU indices. Generated before solving, so gang atomicity, GPU model, selector, taints,
 * islands/NUMA, network.required and InfiniBand hold by construction; the score only checks
 * what options share (GPUs, CPU, memory, queues). Identity equality: each option is one value.
 */
public final class PlacementOption {
    public enum Kind { PLACE, KEEP, MIGRATE }

    private final int id;
    private final Kind kind;
    private final List<OptionTask> tasks;
    private final List<SlotUse> slots;
    private final List<NodeLoad> loads;
    private final long gpuMilli;
    private final int nodeCount;
    private final boolean preferredMet;
    private final boolean preferredAsked;
    private final long fragmentationMilli;
    private final long slownessMilli;

    public PlacementOption(int id, Kind kind, List<OptionTask> tasks, List<SlotUse> slots, List<NodeLoad> loads,
            long gpuMilli, int nodeCount, boolean preferredAsked, boolean preferredMet) {
        this(id, kind, tasks, slots, loads, gpuMilli, nodeCount, preferredAsked, preferredMet, 0);
    }

    /**
     * With {@code fragmentationMilli}: how much the option changes the window workload's expected
     * fragmentation (milli-GPUs; negative when it fills room the workload could not use anyway).
     */
    public PlacementOption(int id, Kind kind, List<OptionTask> tasks, List<SlotUse> slots, List<NodeLoad> loads,
            long gpuMilli, int nodeCount, boolean preferredAsked, boolean preferredMet, long fragmentationMilli) {
        this(id, kind, tasks, slots, loads, gpuMilli, nodeCount, preferredAsked, preferredMet, fragmentationMilli, 0);
    }

    /**
     * With {@code slownessMilli}: its GPUs (milli) times how much slower each one's model is than
     * the fastest (see the engine's GpuSpeeds), so faster GPUs win among otherwise equal options.
     */
    public PlacementOption(int id, Kind kind, List<OptionTask> tasks, List<SlotUse> slots, List<NodeLoad> loads,
            long gpuMilli, int nodeCount, boolean preferredAsked, boolean preferredMet, long fragmentationMilli, long slownessMilli) {
        this.id = id;
        this.kind = kind;
        this.tasks = List.copyOf(tasks);
        this.slots = List.copyOf(slots);
        this.loads = List.copyOf(loads);
        this.gpuMilli = gpuMilli;
        this.nodeCount = nodeCount;
        this.preferredAsked = preferredAsked;
        this.preferredMet = preferredMet;
        this.fragmentationMilli = fragmentationMilli;
        this.slownessMilli = slownessMilli;
    }

    /** GPU milli times slowness of the model (1000 = one GPU one V100-unit slower than the fastest model). */
    public long slownessMilli() {
        return slownessMilli;
    }

    /** The change in expected fragmentation this option makes, measured on the pinned cluster alone. */
    public long fragmentationMilli() {
        return fragmentationMilli;
    }

    public int id() {
        return id;
    }

    public Kind kind() {
        return kind;
    }

    public List<OptionTask> tasks() {
        return tasks;
    }

    public List<SlotUse> slots() {
        return slots;
    }

    public List<NodeLoad> loads() {
        return loads;
    }

    public long gpuMilli() {
        return gpuMilli;
    }

    public int podCount() {
        return tasks.size();
    }

    public int nodeCount() {
        return nodeCount;
    }

    public boolean preferredMissed() {
        return preferredAsked && !preferredMet;
    }

    /** Where every pod goes: equal keys are the same placement. */
    public String placementKey() {
        StringBuilder sb = new StringBuilder();
        for (OptionTask t : tasks) {
            sb.append(t.task()).append('@').append(t.node()).append(java.util.Arrays.toString(t.gpus())).append(';');
        }
        return sb.toString();
    }

    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder(kind.name().toLowerCase()).append('#').append(id).append('[');
        for (OptionTask t : tasks) {
            sb.append(t.task()).append('@').append(t.nodeName()).append(java.util.Arrays.toString(t.gpus())).append(' ');
        }
        return sb.append(']').toString();
    }
}
