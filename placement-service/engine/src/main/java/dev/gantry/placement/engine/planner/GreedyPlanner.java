package dev.gantry.placement.engine.planner;

import dev.gantry.placement.engine.domain.Plan;
import dev.gantry.placement.engine.domain.Scenario;
import dev.gantry.placement.engine.packing.GangPacker;
import dev.gantry.placement.engine.packing.WorkloadMix;
import dev.gantry.placement.engine.packing.GreedyPass;

/**
 * Gang-aware best-fit bin packing in priority order, then submission order; no preemption, no
 * migration (Volcano's gang + binpack). See {@link GreedyPass}.
 */
public final class GreedyPlanner implements Planner {
    private final boolean fragmentationAware;
    private final WorkloadMix mix;

    /** The baseline: best fit by GPUs left over. */
    public GreedyPlanner() {
        this(false);
    }

    /** Packs by expected fragmentation, keeping room for the pods that arrived lately ({@code mix}, may be null). */
    public GreedyPlanner(WorkloadMix mix) {
        this.fragmentationAware = true;
        this.mix = mix;
    }

    /**
     * With {@code fragmentationAware}, pods go where they add the least expected fragmentation
     * ({@link GangPacker#forWindow}): what the solver starts from, and the service's fast path.
     */
    public GreedyPlanner(boolean fragmentationAware) {
        this.fragmentationAware = fragmentationAware;
        this.mix = null;
    }

    @Override
    public String name() {
        return fragmentationAware ? "greedy-fragmentation" : "greedy";
    }

    @Override
    public Plan plan(Scenario scenario, SolverProfile profile) {
        GangPacker packer = fragmentationAware ? GangPacker.forWindow(scenario, mix, profile.gpuSpeeds()) : new GangPacker(scenario.nodes());
        return GreedyPass.run(scenario, true, packer).plan().withMetadata(java.util.Map.of("planner", name()));
    }
}
