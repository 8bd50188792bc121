package dev.gantry.placement.engine.packing;

import dev.gantry.placement.engine.domain.Node;
import dev.gantry.placement.engine.domain.PendingJob;
import dev.gantry.placement.engine.domain.RunningJob;
import dev.gantry.placement.engine.domain.RunningTask;
import dev.gantry.placement.engine.domain.Scenario;
import dev.gantry.placement.engine.domain.TaskGroup;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * How much of a node's free GPU capacity the workload could not use: for each pod shape of the
 * workload (the pods that arrived lately, from a {@link WorkloadMix}, or else the window's pods
 * running and waiting), the free milli-GPUs that shape cannot take
 * on the node, weighted by how common the shape is. A shape that does not fit at all (CPU,
 * memory, GPU model, too few whole GPUs, no sharing) finds every free GPU useless; a whole-GPU
 * shape that fits cannot use partly taken GPUs; a sharing shape cannot use GPUs with less room
 * than it asks. Placing a pod where this rises least keeps the cluster usable for the pods that
 * come next (the fragmentation gradient idea of Weng et al., USENIX ATC '23), where plain best
 * fit only looks at the GPUs left over.
 *
 * <p>MIG: a MIG device is a fixed partition that only a pod of its profile can use, and a GPU in MIG mode is
 * never free for whole-GPU or sharing pods; so MIG pods are not shapes of the workload, and the MIG devices a
 * pod takes do not change the measure (only the CPU and memory it takes do).
 */
public final class FragmentationGauge {

    /**
     * Shapes kept: the most common ones until they cover {@link #COVERAGE} of the pods counted (FGD's
     * typical pods, popularity threshold 95%), at least {@link #MIN_SHAPES} and at most this many
     * (the long tail only costs time). A fixed number of the most common shapes weighs the workload
     * wrongly where pods name GPU models (OpenB gpuspec25/33: a fifth to a third of the pods, in
     * hundreds of small classes): the first 64 shapes gave the model-bound pods two thirds of their
     * share. Alone this changed OpenB's figures within noise; what keeps scarce models for their
     * pods is {@link #displaced} (docs/benchmarks.md).
     */
    static final int MAX_SHAPES = 256;
    /** Shapes kept at least, however few cover {@link #COVERAGE} (the gauge kept 64 before coverage decided). */
    static final int MIN_SHAPES = 64;
    /** Share of the pods counted that the shapes kept must cover. */
    static final double COVERAGE = 0.95;

    /** A pod shape and its share of the workload; {@code milli} non-null for a GPU-sharing pod. */
    record Shape(int gpus, Integer milli, long cpuMillis, long memoryMiB, Set<String> models, double weight) {
        boolean gpuLess() {
            return gpus == 0 && milli == null;
        }
    }

    /** A pod shape without its weight: what the workload is counted by. */
    record Key(int gpus, Integer milli, long cpuMillis, long memoryMiB, Set<String> models) {
        static Key of(TaskGroup g, Set<String> models) {
            return new Key(g.gpuMilli() == null ? g.gpusPerReplica() : 0, g.gpuMilli(), g.cpuMillis(), g.memoryMiB(), models);
        }
    }

    /** Below this many pods counted, a {@link WorkloadMix} says too little and the window's own workload is used. */
    static final int MIN_MIX_PODS = 32;

    /** Measures kept at most: a window's distinct node states are far fewer; the cap only bounds a long-lived gauge. */
    static final int MAX_REMEMBERED = 200_000;

    private final List<Shape> shapes;
    /**
     * Per GPU model, the share of its GPUs that the pods bound to some models would fill if the
     * workload filled the cluster (at most 1): what a GPU of that model is worth to them. Popularity
     * alone cannot see it: a model few classes may use counts its free GPUs as fragmented for every
     * other class, so filling it lowers the measure most, even when the few pods that need it need
     * all of it (OpenB gpuspec33: G3 is 5% of the GPUs, named by 1% of the pods, who ask for 41% of
     * it). Empty when no shape names a model.
     */
    private final Map<String, Double> claimed;
    /**
     * Measures already worked out, by what they depend on. Packing ranks every eligible node for
     * every pod, and most nodes of a large cluster are in one of a few states (free, full, half
     * taken), so most measures are asked for again and again.
     */
    private final Map<NodeState, Double> remembered = new ConcurrentHashMap<>();

    /** All a node's measure depends on: its GPU model and sharing, the room on each GPU, its free CPU and memory. */
    private record NodeState(String model, boolean sharing, long cpuFree, long memFree, int hash, int[] free) {
        static NodeState of(Node node, int[] free, long cpuFree, long memFree) {
            return new NodeState(node.gpuModel(), node.gpuSharing(), cpuFree, memFree, Arrays.hashCode(free), free);
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof NodeState other && hash == other.hash && cpuFree == other.cpuFree && memFree == other.memFree
                    && sharing == other.sharing && Objects.equals(model, other.model) && Arrays.equals(free, other.free);
        }

        @Override
        public int hashCode() {
            return Objects.hash(model, sharing, cpuFree, memFree, hash);
        }
    }

    FragmentationGauge(List<Shape> shapes) {
        this(shapes, Map.of());
    }

    FragmentationGauge(List<Shape> shapes, Map<String, Double> claimed) {
        this.shapes = List.copyOf(shapes);
        this.claimed = Map.copyOf(claimed);
    }

    /** The window's workload: every running task and every waiting pod; null when there is none. */
    public static FragmentationGauge of(Scenario scenario) {
        return of(scenario, null);
    }

    /**
     * The workload of the pods that have arrived lately ({@code mix}), or, while the mix has
     * counted fewer than {@link #MIN_MIX_PODS} pods (or is null), the window's own workload.
     */
    public static FragmentationGauge of(Scenario scenario, WorkloadMix mix) {
        if (mix != null && mix.total() >= MIN_MIX_PODS) {
            return of(mix.counts(), scenario.nodes());
        }
        Map<Key, Double> counts = new HashMap<>();
        for (RunningJob job : scenario.running()) {
            for (RunningTask t : job.tasks()) {
                if (t.migProfile() != null) {
                    continue;
                }
                // a running task's model constraint is not in the snapshot: it counts as "any model"
                Integer milli = t.gpuMilli();
                counts.merge(new Key(milli == null ? t.gpus().size() : 0, milli, t.cpuMillis(), t.memoryMiB(), Set.of()), 1.0, Double::sum);
            }
        }
        for (PendingJob job : scenario.pending()) {
            Set<String> models = Set.copyOf(job.gpuModels());
            for (TaskGroup g : job.taskGroups()) {
                if (g.migProfile() == null) {
                    counts.merge(Key.of(g, models), (double) g.replicas(), Double::sum);
                }
            }
        }
        return of(counts, scenario.nodes());
    }

    private static FragmentationGauge of(Map<Key, Double> counts, List<Node> nodes) {
        if (counts.isEmpty()) {
            return null;
        }
        List<Map.Entry<Key, Double>> common = new ArrayList<>(counts.entrySet());
        common.sort(Map.Entry.<Key, Double>comparingByValue().reversed()
                .thenComparing(e -> e.getKey().toString())); // deterministic among equal counts
        double all = common.stream().mapToDouble(Map.Entry::getValue).sum();
        int n = 0;
        double total = 0;
        while (n < common.size() && n < MAX_SHAPES && (n < MIN_SHAPES || total < COVERAGE * all)) {
            total += common.get(n++).getValue();
        }
        List<Map.Entry<Key, Double>> kept = common.subList(0, n);
        List<Shape> shapes = new ArrayList<>();
        for (Map.Entry<Key, Double> e : kept) {
            Key k = e.getKey();
            shapes.add(new Shape(k.gpus(), k.milli(), k.cpuMillis(), k.memoryMiB(), k.models(), e.getValue() / total));
        }
        // the model-bound demand from every shape counted: the long tail of small model-bound classes is most of it
        List<Shape> everyShape = new ArrayList<>();
        for (Map.Entry<Key, Double> e : common) {
            Key k = e.getKey();
            everyShape.add(new Shape(k.gpus(), k.milli(), k.cpuMillis(), k.memoryMiB(), k.models(), e.getValue() / all));
        }
        return new FragmentationGauge(shapes, claimed(everyShape, nodes));
    }

    /**
     * Per model, the model-bound demand over its supply: each model-bound shape's share of the GPUs
     * the workload asks for, as if it filled the cluster, spread over the models it may use in
     * proportion to their GPUs.
     */
    static Map<String, Double> claimed(List<Shape> shapes, List<Node> nodes) {
        Map<String, Double> supply = new HashMap<>();
        for (Node n : nodes) {
            if (n.schedulable() && n.gpuModel() != null && n.gpus() > 0) {
                supply.merge(n.gpuModel(), 1000.0 * n.gpus(), Double::sum);
            }
        }
        double capacity = supply.values().stream().mapToDouble(Double::doubleValue).sum();
        double asked = shapes.stream().mapToDouble(s -> s.weight() * milliPerPod(s)).sum();
        if (capacity == 0 || asked == 0) {
            return Map.of();
        }
        Map<String, Double> demand = new HashMap<>();
        for (Shape s : shapes) {
            double pool = s.models().stream().mapToDouble(m -> supply.getOrDefault(m, 0.0)).sum();
            if (s.models().isEmpty() || pool == 0 || milliPerPod(s) == 0) {
                continue;
            }
            double d = capacity * s.weight() * milliPerPod(s) / asked;
            for (String m : s.models()) {
                if (supply.containsKey(m)) {
                    demand.merge(m, d * supply.get(m) / pool, Double::sum);
                }
            }
        }
        Map<String, Double> out = new HashMap<>();
        demand.forEach((m, d) -> out.put(m, Math.min(1.0, d / supply.get(m))));
        return out;
    }

    private static long milliPerPod(Shape s) {
        return s.milli() != null ? s.milli() : 1000L * s.gpus();
    }

    /**
     * The model-bound demand the pod would displace on the node, in milli-GPUs: its GPUs times the
     * share of the node's model its own pods claim ({@link #claimed}). Ranked beside the change in
     * fragmentation, it keeps scarce models for the pods that can run nowhere else; it is the same
     * on every node of a model, so it only chooses between models.
     */
    public double displaced(Node node, Replica r) {
        Double share = claimed.get(node.gpuModel());
        return share == null || r.mig() ? 0 : r.gpuMilli() * share;
    }

    /** Expected unusable free milli-GPUs on the node as it is in {@code st}. */
    public double measure(ClusterState st, int node) {
        return measure(st.node(node), freePerGpu(st, node), st.cpuFree(node), st.memFree(node));
    }

    /**
     * How much the measure changes if the replica takes {@code gpus} on the node: negative when
     * the pod fills room only other shapes could not use anyway. {@code st} is not changed.
     */
    public double delta(ClusterState st, int node, Replica r, int[] gpus) {
        return delta(st, node, List.of(r), List.of(gpus));
    }

    /** As {@link #delta(ClusterState, int, Replica, int[])} for several pods on one node at once. */
    public double delta(ClusterState st, int node, List<Replica> pods, List<int[]> gpusOfPods) {
        int[] before = freePerGpu(st, node);
        int[] after = before.clone();
        long cpu = st.cpuFree(node);
        long mem = st.memFree(node);
        for (int i = 0; i < pods.size(); i++) {
            Replica r = pods.get(i);
            for (int g : gpusOfPods.get(i)) {
                if (g >= ClusterState.MIG_SLOT) {
                    continue;
                }
                // never below zero: an option drawn on another state may overlap work this state holds
                after[g] = Math.max(0, after[g] - (r.milli() == null ? 1000 : r.milli()));
            }
            cpu -= r.cpuMillis();
            mem -= r.memoryMiB();
        }
        Node n = st.node(node);
        return measure(n, after, cpu, mem) - measure(n, before, st.cpuFree(node), st.memFree(node));
    }

    private static int[] freePerGpu(ClusterState st, int node) {
        int gpus = st.node(node).gpus();
        int[] free = new int[gpus];
        long mask = st.freeMask(node);
        for (int g = 0; g < gpus; g++) {
            int shared = st.sharedMilli(node, g);
            // free, or the room left on a GPU that sharing pods hold, or nothing on a GPU held whole
            free[g] = (mask & (1L << g)) != 0 ? 1000 : shared > 0 ? 1000 - shared : 0;
        }
        return free;
    }

    private double measure(Node node, int[] free, long cpuFree, long memFree) {
        NodeState state = NodeState.of(node, free, cpuFree, memFree);
        Double known = remembered.get(state);
        if (known != null) {
            return known;
        }
        double value = measureAfresh(node, free, cpuFree, memFree);
        if (remembered.size() >= MAX_REMEMBERED) {
            remembered.clear();
        }
        remembered.put(new NodeState(state.model(), state.sharing(), cpuFree, memFree, state.hash(), free.clone()), value);
        return value;
    }

    private double measureAfresh(Node node, int[] free, long cpuFree, long memFree) {
        int total = 0;
        int whole = 0;
        for (int f : free) {
            total += f;
            whole += f == 1000 ? 1 : 0;
        }
        if (total == 0) {
            return 0;
        }
        double sum = 0;
        for (Shape s : shapes) {
            sum += s.weight() * unusable(s, node, free, total, whole, cpuFree, memFree);
        }
        return sum;
    }

    private static int unusable(Shape s, Node node, int[] free, int total, int whole, long cpuFree, long memFree) {
        if (s.gpuLess() || cpuFree < s.cpuMillis() || memFree < s.memoryMiB()
                || !s.models().isEmpty() && !s.models().contains(node.gpuModel())) {
            return total;
        }
        int unusable = 0;
        if (s.milli() != null) {
            if (!node.gpuSharing()) {
                return total;
            }
            for (int f : free) {
                unusable += f < s.milli() ? f : 0;
            }
            return unusable;
        }
        if (whole < s.gpus()) {
            return total;
        }
        for (int f : free) {
            unusable += f < 1000 ? f : 0;
        }
        return unusable;
    }

    /** The shapes measured, most common first (for tests and reports). */
    List<Shape> shapes() {
        return shapes;
    }
}
