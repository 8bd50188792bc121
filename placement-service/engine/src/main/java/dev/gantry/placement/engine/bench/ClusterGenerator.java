package dev.gantry.placement.engine.bench;

import dev.gantry.placement.engine.domain.GpuTopology;
import dev.gantry.placement.engine.domain.Network;
import dev.gantry.placement.engine.domain.NetworkLevel;
import dev.gantry.placement.engine.domain.Node;
import dev.gantry.placement.engine.domain.PendingJob;
import dev.gantry.placement.engine.domain.Queue;
import dev.gantry.placement.engine.domain.RunningJob;
import dev.gantry.placement.engine.domain.RunningTask;
import dev.gantry.placement.engine.domain.Scenario;
import dev.gantry.placement.engine.domain.TaskGroup;
import dev.gantry.placement.engine.domain.Topology;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * Synthetic but realistic windows for benchmarks and property tests: racks of one node kind
 * (DGX A100 and H100 with InfiniBand, PCIe V100 with NVLink pairs, 4-GPU workstations that share
 * GPUs) under leaves and spines; running work scattered to a target occupancy (so the cluster is
 * fragmented, as real ones are); pending gangs in a Philly-like size mix (45% 1-GPU ... 2% 64-GPU).
 * Deterministic for a seed.
 */
public final class ClusterGenerator {
    private static final int NODES_PER_LEAF = 16;
    private static final int LEAVES_PER_SPINE = 8;
    private static final int SPINES_PER_ZONE = 4;
    private static final int[] SIZES = {1, 2, 4, 8, 16, 32, 64};
    private static final double[] SIZE_MIX = {0.45, 0.15, 0.15, 0.15, 0.05, 0.03, 0.02};
    private static final int[] PRIORITIES = {0, 0, 100, 100, 200, 500, 1000};

    private enum Kind {
        A100("A100-SXM4-80GB", 8, 224_000, 1_900_000, "ib-a"),
        H100("H100-SXM5-80GB", 8, 224_000, 1_900_000, "ib-h"),
        V100("V100-PCIE-32GB", 8, 96_000, 768_000, null),
        WORKSTATION("RTX-A6000", 4, 32_000, 256_000, null);

        final String model;
        final int gpus;
        final long cpu;
        final long mem;
        final String ib;

        Kind(String model, int gpus, long cpu, long mem, String ib) {
            this.model = model;
            this.gpus = gpus;
            this.cpu = cpu;
            this.mem = mem;
            this.ib = ib;
        }
    }

    private final Random random;

    private ClusterGenerator(long seed) {
        this.random = new Random(seed);
    }

    /** {@code nodes} nodes, {@code pendingJobs} pending gangs, running work up to {@code busy} of the GPUs. */
    public static Scenario generate(String name, int nodes, int pendingJobs, double busy, long seed) {
        return new ClusterGenerator(seed).build(name, nodes, pendingJobs, busy);
    }

    private Scenario build(String name, int nodeCount, int pendingJobs, double busy) {
        List<Node> nodes = new ArrayList<>();
        Kind[] kinds = {Kind.A100, Kind.A100, Kind.A100, Kind.H100, Kind.H100, Kind.V100, Kind.V100, Kind.WORKSTATION, Kind.WORKSTATION, Kind.V100};
        int leafSize = Math.min(NODES_PER_LEAF, Math.max(2, nodeCount / 4));
        for (int i = 0; i < nodeCount; i++) {
            int leaf = i / leafSize;
            int spine = leaf / LEAVES_PER_SPINE;
            int zone = spine / SPINES_PER_ZONE;
            Kind k = kinds[leaf % kinds.length];
            nodes.add(node(String.format("node-%05d", i), k, new Topology("z" + zone, "sp" + spine, "lf" + leaf),
                    k.ib == null ? null : k.ib + "-z" + zone));
        }
        int totalGpus = nodes.stream().mapToInt(Node::gpus).sum();
        List<Queue> queues = List.of(
                new Queue("org-ml", 4, 0, (int) (totalGpus * 0.8), true, null),
                new Queue("team-a", 3, (int) (totalGpus * 0.3), null, true, "org-ml"),
                new Queue("team-b", 2, (int) (totalGpus * 0.2), null, true, "org-ml"),
                new Queue("team-c", 1, (int) (totalGpus * 0.1), null, true, null),
                new Queue("team-d", 1, 0, null, true, null));
        List<String> leafQueues = List.of("team-a", "team-b", "team-c", "team-d");
        List<RunningJob> running = running(nodes, leafQueues, (long) (totalGpus * busy));
        List<PendingJob> pending = new ArrayList<>();
        for (int i = 0; i < pendingJobs; i++) {
            pending.add(pendingJob(String.format("pend-%05d", i), leafQueues.get(random.nextInt(leafQueues.size()))));
        }
        return new Scenario(Scenario.FORMAT, name, 0, nodes, queues, running, pending);
    }

    private Node node(String name, Kind k, Topology topology, String ib) {
        List<List<Integer>> islands = switch (k) {
            case A100, H100 -> List.of(List.of(0, 1, 2, 3, 4, 5, 6, 7));
            case V100 -> List.of(List.of(0, 1), List.of(2, 3), List.of(4, 5), List.of(6, 7));
            case WORKSTATION -> null;
        };
        List<List<Integer>> numa = k.gpus == 8 ? List.of(List.of(0, 1, 2, 3), List.of(4, 5, 6, 7)) : List.of(List.of(0, 1, 2, 3));
        return new Node(name, k.model, k.gpus, islands, numa, k.cpu, k.mem, topology, ib,
                Map.of("nvidia.com/gpu.product", k.model), List.of(), true, k == Kind.WORKSTATION);
    }

    /** Running work dropped on random nodes (first fit in random order): fragmented, like a live cluster. */
    private List<RunningJob> running(List<Node> nodes, List<String> queues, long targetGpus) {
        int n = nodes.size();
        long[] free = new long[n];
        for (int i = 0; i < n; i++) {
            free[i] = (1L << nodes.get(i).gpus()) - 1;
        }
        List<RunningJob> out = new ArrayList<>();
        long used = 0;
        int attempts = 0;
        while (used < targetGpus && attempts++ < targetGpus * 4) {
            int size = Math.min(8, SIZES[pickSize()]);
            int node = random.nextInt(n);
            for (int probe = 0; probe < 8 && Long.bitCount(free[node]) < size; probe++) {
                node = random.nextInt(n);
            }
            if (Long.bitCount(free[node]) < size) {
                continue;
            }
            List<Integer> gpus = new ArrayList<>();
            long f = free[node];
            // scattered indices, not the lowest: running jobs come and go
            List<Integer> freeIdx = new ArrayList<>();
            for (int g = 0; g < 64; g++) {
                if ((f & (1L << g)) != 0) {
                    freeIdx.add(g);
                }
            }
            java.util.Collections.shuffle(freeIdx, random);
            for (int i = 0; i < size; i++) {
                gpus.add(freeIdx.get(i));
                free[node] &= ~(1L << freeIdx.get(i));
            }
            gpus.sort(null);
            used += size;
            boolean preemptible = random.nextDouble() < 0.8;
            boolean migratable = random.nextDouble() < 0.2;
            out.add(new RunningJob(String.format("run-%05d", out.size()), queues.get(random.nextInt(queues.size())),
                    PRIORITIES[random.nextInt(PRIORITIES.length)], preemptible, random.nextDouble() < 0.7, migratable,
                    -random.nextInt(86_400), List.of(new RunningTask("w-0", nodes.get(node).name(), gpus, 2000L * size, 16_000L * size, null))));
        }
        return out;
    }

    private int pickSize() {
        double x = random.nextDouble();
        for (int i = 0; i < SIZE_MIX.length; i++) {
            x -= SIZE_MIX[i];
            if (x < 0) {
                return i;
            }
        }
        return 0;
    }

    private PendingJob pendingJob(String name, String queue) {
        int size = SIZES[pickSize()];
        int priority = PRIORITIES[random.nextInt(PRIORITIES.length)];
        long submitted = -random.nextInt(86_400);
        double m = random.nextDouble();
        List<String> models = m < 0.4 ? List.of() : m < 0.7 ? List.of("A100-SXM4-80GB", "H100-SXM5-80GB")
                : m < 0.85 ? List.of("V100-PCIE-32GB") : m < 0.95 ? List.of("A100-SXM4-80GB") : List.of("H100-SXM5-80GB");
        if (size == 1 && random.nextDouble() < 0.1) {
            // an inference replica set sharing GPUs on the workstations
            int replicas = 1 + random.nextInt(3);
            return new PendingJob(name, queue, priority, submitted,
                    List.of(new TaskGroup("server", replicas, 1, 1000, 8000, 250 * (1 + random.nextInt(3)))), replicas,
                    List.of("RTX-A6000"), GpuTopology.ANY, Network.ANY, false, Map.of(), List.of(), true, false, null);
        }
        if (size <= 8) {
            GpuTopology topo = size >= 2 && random.nextDouble() < 0.5 ? GpuTopology.NVLINK : GpuTopology.ANY;
            if (topo == GpuTopology.NVLINK && models.equals(List.of("V100-PCIE-32GB")) && size > 2) {
                topo = size == 4 ? GpuTopology.NUMA : GpuTopology.ANY; // V100 islands are pairs
            }
            return new PendingJob(name, queue, priority, submitted,
                    List.of(new TaskGroup("worker", 1, size, 4000L * size, 32_000L * size, null)), 1,
                    models, topo, Network.ANY, false, Map.of(), List.of(), true, true, 3600L);
        }
        // distributed gangs: 8-GPU workers on DGX nodes, under one leaf (or spine for the largest)
        int workers = size / 8;
        NetworkLevel required = size >= 64 ? NetworkLevel.SPINE : random.nextDouble() < 0.5 ? NetworkLevel.LEAF : NetworkLevel.SPINE;
        List<String> dgx = random.nextBoolean() ? List.of("A100-SXM4-80GB", "H100-SXM5-80GB") : List.of(random.nextBoolean() ? "A100-SXM4-80GB" : "H100-SXM5-80GB");
        return new PendingJob(name, queue, priority, submitted,
                List.of(new TaskGroup("worker", workers, 8, 32_000, 256_000, null)), workers,
                dgx, GpuTopology.NVLINK, new Network(required, NetworkLevel.LEAF), true, Map.of(), List.of(), true, true, 4 * 3600L);
    }
}
