package dev.gantry.placement.engine.solver;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Small hand-built entities and options for constraint tests. */
final class SolverFixtures {
    static final NodeCapacity N0 = new NodeCapacity(0, "n0", 10_000, 10_000, 8000, 8000, false);
    static final NodeCapacity N1 = new NodeCapacity(1, "n1", 10_000, 10_000, 6000, 8000, true);
    static final QueueFacts Q = queue("q", 8000, 0, 0, true);
    private static final Map<String, GpuSlot> SLOTS = new LinkedHashMap<>();
    private static int ids;

    private SolverFixtures() {
    }

    static QueueFacts queue(String name, long capabilityMilli, long beforeMilli, long guaranteeMilli, boolean reclaimable) {
        return new QueueFacts(name, capabilityMilli, beforeMilli, beforeMilli, 0, 0, guaranteeMilli, reclaimable, 4000);
    }

    static GpuSlot slot(NodeCapacity n, int gpu, int pinnedMilli) {
        return SLOTS.computeIfAbsent(n.name() + "/" + gpu + "/" + pinnedMilli, k -> new GpuSlot(n.node(), gpu, n.name(), pinnedMilli));
    }

    /** An option on one node taking the listed GPUs whole (or {@code milli} of each when sharing). */
    static PlacementOption option(PlacementOption.Kind kind, NodeCapacity n, Integer milli, long cpu, long mem, int... gpus) {
        List<SlotUse> uses = new ArrayList<>();
        long total = 0;
        for (int g : gpus) {
            int m = milli == null ? 1000 : milli;
            uses.add(new SlotUse(slot(n, g, 0), m));
            total += m;
        }
        OptionTask t = new OptionTask("w-0", n.node(), n.name(), gpus, milli, cpu, mem);
        return new PlacementOption(ids++, kind, List.of(t), uses, List.of(new NodeLoad(n, cpu, mem, total)), total, 1, false, false);
    }

    static PlacementOption place(NodeCapacity n, int... gpus) {
        return option(PlacementOption.Kind.PLACE, n, null, 1000, 1000, gpus);
    }

    static GangAssignment pending(String name, QueueFacts q, int priority, long gpuMilli, PlacementOption chosen) {
        GangAssignment a = new GangAssignment(name, GangAssignment.Role.PENDING, q, List.of(q), priority, gpuMilli, 1000L + priority,
                true, true, 0, chosen == null ? List.of() : List.of(chosen), null);
        a.setOption(chosen);
        return a;
    }

    static GangAssignment running(String name, QueueFacts q, int priority, boolean preemptible, PlacementOption current, PlacementOption chosen) {
        GangAssignment a = new GangAssignment(name, GangAssignment.Role.RUNNING, q, List.of(q), priority, current.gpuMilli(), 1000L + priority,
                preemptible, true, 3600, chosen == null || chosen == current ? List.of(current) : List.of(current, chosen), current);
        a.setOption(chosen);
        return a;
    }
}
