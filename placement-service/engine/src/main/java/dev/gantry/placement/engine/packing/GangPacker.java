package dev.gantry.placement.engine.packing;

import dev.gantry.placement.engine.domain.NetworkLevel;
import dev.gantry.placement.engine.domain.Node;
import dev.gantry.placement.engine.domain.PendingJob;
import dev.gantry.placement.engine.domain.Scenario;
import dev.gantry.placement.engine.validation.PlanValidator;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Gang-aware best-fit packing (Volcano gang + binpack): a gang is tried inside each network
 * domain its {@code network.required} allows (split by InfiniBand fabric when it needs one),
 * tightest domain first; inside a domain each pod goes to a node the gang already uses, else to
 * the node where it adds the least expected fragmentation (with a {@link FragmentationGauge}),
 * else the node it fills most. A gang is returned only when at least {@code minAvailable} pods fit.
 * Node eligibility and domains are cached per requirement signature: many jobs share them.
 */
public final class GangPacker {

    /** A pod put on a node with concrete GPU indices. */
    public record Assigned(Replica replica, int node, int[] gpus) {
    }

    /** A gang's placement; {@code complete} when every replica fits. */
    public record GangFit(List<Assigned> tasks, boolean complete) {
        public long gpuMilli() {
            return tasks.stream().mapToLong(a -> a.replica().gpuMilli()).sum();
        }

        public int nodeCount() {
            return (int) tasks.stream().mapToInt(Assigned::node).distinct().count();
        }
    }

    private record Signature(List<String> models, Map<String, String> selector, List<?> tolerations, boolean sharing, boolean gpus) {
    }

    private record DomainKey(Signature sig, NetworkLevel level, boolean ib) {
    }

    private final List<Node> nodes;
    /** Ranks nodes by the fragmentation a pod adds; null: plain best fit by GPUs left over. */
    private final FragmentationGauge gauge;
    private final Map<Signature, int[]> eligible = new HashMap<>();
    private final Map<DomainKey, List<int[]>> domains = new HashMap<>();
    private final Map<List<Object>, List<Integer>> rankings = new HashMap<>();
    private final Map<Signature, List<int[]>> fabricDomains = new HashMap<>();
    /** Per node, how much slower its GPU model is than the fastest (hundredths, see {@link GpuSpeeds}); all 0 without a gauge. */
    private final int[] slowness;
    /** The largest GPU count of a node each signature may use: a gang above it spans nodes. */
    private final Map<Signature, Long> largestNode = new HashMap<>();
    /** Nodes kept in a shared one-pod ranking at least, and per {@link #RANKING_JOBS} pending jobs of the window. */
    private static final int RANKING_SIZE = 24;
    static final int RANKING_JOBS = 500;
    /** Nodes kept in a shared one-pod ranking for this window ({@link #shareRankingsAmong}). */
    private int rankingSize = RANKING_SIZE;
    /**
     * With a gauge, the rank of each pod shape on each node of the states packed on lately, kept
     * until the node changes: packing a window ranks every eligible node for every pod, and
     * between two pods only the few nodes the last one took have changed (5,000 nodes, 10,000
     * gangs: the seed spent most of its time measuring nodes it had measured before).
     */
    private final Map<ClusterState, Map<PodShape, NodeRanks>> remembered = new LinkedHashMap<>(16, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<ClusterState, Map<PodShape, NodeRanks>> eldest) {
            return size() > REMEMBERED_STATES;
        }
    };
    /** States whose ranks are kept (greedy's and the victim states of a window: one per queue and priority); an older one's are dropped. */
    private static final int REMEMBERED_STATES = 32;
    /** A rank that means the pod does not fit on the node. */
    private static final long NO_FIT = Long.MAX_VALUE;

    /** What a pod's rank on a node depends on, besides the node: a replica without its name. */
    private record PodShape(int gpus, Integer milli, long cpuMillis, long memoryMiB, dev.gantry.placement.engine.domain.GpuTopology topology,
            String migProfile) {
        static PodShape of(Replica r) {
            return new PodShape(r.gpus(), r.milli(), r.cpuMillis(), r.memoryMiB(), r.topology(), r.migProfile());
        }
    }

    /** One pod shape's ranks and GPU choices per node, each with the node's change count it holds for (plus one; 0: none yet). */
    private static final class NodeRanks {
        final int[] validAt;
        final long[] rank;
        final int[][] gpus;

        NodeRanks(int nodes) {
            validAt = new int[nodes];
            rank = new long[nodes];
            gpus = new int[nodes][];
        }
    }

    public GangPacker(List<Node> nodes) {
        this(nodes, null);
    }

    /** With a gauge, a pod goes where it adds the least expected fragmentation, best fit among equals (default GPU speeds). */
    public GangPacker(List<Node> nodes, FragmentationGauge gauge) {
        this(nodes, gauge, GpuSpeeds.DEFAULT);
    }

    /**
     * With a gauge, Gantry's own packing and its defaults: among placements the gauge sees as
     * equal, a multi-GPU pod's GPUs on one NVLink island (else one NUMA node), then the faster GPU
     * model by {@code speeds}, then the fullest node; a gang that needs several nodes first tries
     * one InfiniBand fabric (one leaf of it first). Without a gauge (the baselines), plain best fit.
     */
    public GangPacker(List<Node> nodes, FragmentationGauge gauge, GpuSpeeds speeds) {
        this.nodes = nodes;
        this.gauge = gauge;
        this.slowness = new int[nodes.size()];
        if (gauge != null && speeds != null && !speeds.isNone()) {
            for (int i = 0; i < nodes.size(); i++) {
                slowness[i] = Math.min(MAX_SLOWNESS, speeds.slownessCentis(nodes.get(i).gpuModel()));
            }
        }
    }

    /** The packer for a window: nodes ranked by the fragmentation the window's workload would see. */
    public static GangPacker forWindow(Scenario sc) {
        return forWindow(sc, null);
    }

    /** As {@link #forWindow(Scenario)}, keeping room for the pods that arrived lately ({@code mix}, may be null). */
    public static GangPacker forWindow(Scenario sc, WorkloadMix mix) {
        return forWindow(sc, mix, GpuSpeeds.DEFAULT);
    }

    /** As {@link #forWindow(Scenario, WorkloadMix)} with the site's GPU speeds ({@link GpuSpeeds#NONE}: no speed preference). */
    public static GangPacker forWindow(Scenario sc, WorkloadMix mix, GpuSpeeds speeds) {
        return new GangPacker(sc.nodes(), FragmentationGauge.of(sc, mix), speeds);
    }

    /** The gauge ranking this packer's nodes, or null for plain best fit. */
    public FragmentationGauge gauge() {
        return gauge;
    }

    /** Spreads the GPU model's slowness above any left-over figure (which stays below it). */
    private static final long LEFTOVER_SPAN = 1L << 20;
    private static final int MAX_SLOWNESS = (1 << 10) - 1;
    /** Spreads a pod's GPU spread (island, NUMA, apart) above any slowness. */
    private static final long SPREAD_SPAN = LEFTOVER_SPAN << 10;
    /** Spreads a fragmentation change (in steps, see below) above any spread. */
    private static final long FRAGMENTATION_SPAN = SPREAD_SPAN << 2;

    /**
     * Expected-fragmentation changes are compared in steps of this many milli-GPUs: nodes whose
     * changes differ by less are equal to the gauge (the workload mix is an estimate, its last
     * digits are noise) and the fuller node in CPU and GPUs goes first. On OpenB (FGD protocol,
     * online, the fragmentation-aware pass alone) 20 gave 95.24% at 100% arrived over seeds
     * 42-51, 10 gave 95.14%, exact comparison 94.95% (seeds 42-44): see docs/benchmarks.md. On
     * gpushare100 (seed 42) 1, 5, 50 and 100 all did worse than 20. {@code -Dgantry.packing.fragmentationStepMilli}
     * overrides it (experiments).
     */
    static final double FRAGMENTATION_STEP_MILLI = Double.parseDouble(System.getProperty("gantry.packing.fragmentationStepMilli", "20"));

    /**
     * GPU indices for the pod on the node, or null: {@link ClusterState#pick}, except that with a
     * gauge a sharing pod takes the GPU where it adds the least expected fragmentation (the room
     * left on a GPU decides which later pods still fit there).
     */
    private int[] choose(ClusterState st, int node, Replica r) {
        int[] picked = st.pick(node, r);
        if (picked == null || gauge == null || !r.sharing()) {
            return picked;
        }
        int best = picked[0];
        double bestDelta = gauge.delta(st, node, r, picked);
        for (int g : st.sharingChoices(node, r)) {
            double d = gauge.delta(st, node, r, new int[] {g});
            if (d < bestDelta - 1e-9) {
                best = g;
                bestDelta = d;
            }
        }
        return new int[] {best};
    }

    /**
     * Rank of a pod on a node, lower is better. Without a gauge: what it leaves free there (best
     * fit by GPUs). With one: the fragmentation it adds plus the model-bound demand it displaces
     * ({@link FragmentationGauge#displaced}; in steps of {@link #FRAGMENTATION_STEP_MILLI}), then how far apart its GPUs lie ({@link ClusterState#spread}),
     * then how slow the node's GPU model is, then what it leaves free (CPU and GPUs). The workload's
     * needs come first: speed and topology only choose among nodes it sees as equal.
     */
    private long rank(ClusterState st, int node, Replica r, int[] gpus, long left) {
        if (gauge == null) {
            return left;
        }
        long slow = r.gpuMilli() > 0 ? slowness[node] : 0;
        double cost = gauge.delta(st, node, r, gpus) + gauge.displaced(st.node(node), r);
        return Math.round(cost / FRAGMENTATION_STEP_MILLI) * FRAGMENTATION_SPAN
                + st.spread(node, gpus) * SPREAD_SPAN + slow * LEFTOVER_SPAN + leftover(st, node, r, left);
    }

    /** The largest node a leftover is measured against: 128 cores, 8 GPUs. */
    private static final double FULL_NODE_CPU_MILLIS = 128_000;
    private static final double FULL_NODE_GPU_MILLI = 8_000;
    /**
     * The CPU's part of a leftover (the GPUs' is the rest). Half each took OpenB's default workload
     * from 93.81% (GPUs alone) to 95.14% when it was chosen (seed 42); on gpushare100 a quarter gave
     * 86.72% against half's 86.33% (docs/benchmarks.md, "The leftover's CPU share"). {@code -Dgantry.packing.cpuLeftoverShare}
     * overrides it (experiments).
     */
    static final double CPU_LEFTOVER_SHARE = Double.parseDouble(System.getProperty("gantry.packing.cpuLeftoverShare", "0.5"));

    /**
     * CPU and GPUs left on the node after the pod, half each ({@link #CPU_LEFTOVER_SHARE}), as shares of a large node, in
     * millionths (below {@link #LEFTOVER_SPAN}): among nodes the workload sees as equal, the
     * fullest in both goes first, since a node short of CPU strands its GPUs as surely as a
     * node short of GPUs.
     */
    private static long leftover(ClusterState st, int node, Replica r, long gpuLeft) {
        double cpuLeft = Math.max(0, st.cpuFree(node) - r.cpuMillis());
        double share = CPU_LEFTOVER_SHARE * Math.min(1, cpuLeft / FULL_NODE_CPU_MILLIS)
                + (1 - CPU_LEFTOVER_SHARE) * Math.min(1, gpuLeft / FULL_NODE_GPU_MILLI);
        return Math.round(share * 1_000_000);
    }

    private static Signature signature(PendingJob job) {
        boolean sharing = job.taskGroups().stream().anyMatch(g -> g.gpuMilli() != null);
        boolean gpus = job.taskGroups().stream().anyMatch(g -> g.gpusPerReplica() > 0);
        return new Signature(job.gpuModels(), job.nodeSelector(), job.tolerations(), sharing, gpus);
    }

    /** Nodes this job's pods may use at all (schedulable, model, selector, taints, sharing). */
    public int[] eligibleNodes(PendingJob job) {
        return eligible.computeIfAbsent(signature(job), sig -> {
            List<Integer> out = new ArrayList<>();
            for (int i = 0; i < nodes.size(); i++) {
                Node n = nodes.get(i);
                if (PlanValidator.nodeMismatch(job, n, sig.gpus()) == null && (!sig.sharing() || n.gpuSharing())) {
                    out.add(i);
                }
            }
            return out.stream().mapToInt(Integer::intValue).toArray();
        });
    }

    /** The node sets a gang may span at {@code level}: one per domain key (and IB fabric if needed). */
    public List<int[]> domains(PendingJob job, NetworkLevel level) {
        boolean ib = job.requireInfiniBand();
        return domains.computeIfAbsent(new DomainKey(signature(job), level, ib), k -> {
            int[] el = eligibleNodes(job);
            List<int[]> out = new ArrayList<>();
            if (level == NetworkLevel.NODE) {
                for (int i : el) {
                    out.add(new int[] {i});
                }
                return out;
            }
            Map<List<String>, List<Integer>> groups = new LinkedHashMap<>();
            for (int i : el) {
                Node n = nodes.get(i);
                String key = level == NetworkLevel.ANY ? "" : n.topology().key(level);
                if (key == null || ib && n.ibFabric() == null) {
                    out.add(new int[] {i}); // unknown domain: the node can only hold the gang alone
                    continue;
                }
                groups.computeIfAbsent(Arrays.asList(key, ib ? n.ibFabric() : ""), x -> new ArrayList<>()).add(i);
            }
            groups.values().forEach(g -> out.add(g.stream().mapToInt(Integer::intValue).toArray()));
            return out;
        });
    }

    /**
     * Best placement for the job on the current state, or null. Tries the preferred network level
     * first (complete gangs only), then the required level; does not change {@code st}.
     */
    public GangFit place(ClusterState st, PendingJob job, List<Replica> reps) {
        NetworkLevel req = job.network().required();
        NetworkLevel pref = job.network().preferred();
        long minMilli = minGangMilli(job, reps);
        List<int[]> fabrics = oneFabricDomains(job, reps);
        if (!fabrics.isEmpty()) {
            GangFit fit = bestInDomains(st, job, reps, fabrics, minMilli, true);
            if (fit != null) {
                return fit;
            }
        }
        if (pref != null && pref.ordinal() > req.ordinal()) {
            GangFit fit = bestInDomains(st, job, reps, domains(job, pref), minMilli, true);
            if (fit != null) {
                return fit;
            }
        }
        return bestInDomains(st, job, reps, domains(job, req), minMilli, false);
    }

    /** GPUs of the {@code minAvailable} smallest pods: less than that free in a domain cannot work. */
    public static long minGangMilli(PendingJob job, List<Replica> reps) {
        long sum = 0;
        for (int i = reps.size() - 1, c = 0; i >= 0 && c < job.minAvailable(); i--, c++) {
            sum += reps.get(i).gpuMilli();
        }
        return sum;
    }

    private GangFit bestInDomains(ClusterState st, PendingJob job, List<Replica> reps, List<int[]> doms, long minMilli, boolean completeOnly) {
        long total = reps.stream().mapToLong(Replica::gpuMilli).sum();
        // tightest domain first: fill partly used racks before opening empty ones
        List<long[]> order = new ArrayList<>();
        for (int d = 0; d < doms.size(); d++) {
            long cap = 0;
            for (int i : doms.get(d)) {
                cap += capacity(st, i);
            }
            if (cap >= minMilli && (!completeOnly || cap >= total)) {
                order.add(new long[] {cap >= total ? 0 : 1, cap, d});
            }
        }
        order.sort((a, b) -> a[0] != b[0] ? Long.compare(a[0], b[0]) : a[1] != b[1] ? Long.compare(a[1], b[1]) : Long.compare(a[2], b[2]));
        GangFit partial = null;
        int tries = 0;
        for (long[] o : order) {
            GangFit fit = packInDomain(st, job, reps, doms.get((int) o[2]));
            if (fit != null && fit.complete()) {
                return fit;
            }
            if (fit != null && partial == null && !completeOnly) {
                partial = fit;
            }
            // a domain that fails on capacity checks already costs a full scan: bound the search
            if (++tries >= 64 && partial != null) {
                break;
            }
        }
        return partial;
    }

    /**
     * Up to {@code k} distinct placements, best first: for a one-pod gang its {@code k} best-fit
     * nodes; for a larger gang the tightest domains, and (one domain) different seed nodes for
     * the biggest pod. The solver's options are these, taken on several cluster states.
     */
    public List<GangFit> candidates(ClusterState st, PendingJob job, List<Replica> reps, int k) {
        return candidates(st, job, reps, k, -1);
    }

    /**
     * Sizes the shared one-pod rankings for a window of {@code pendingJobs}: the more jobs share a
     * ranking, the more nodes it needs for them to aim at different ones. A fixed 24 nodes left ten
     * jobs aiming at each node at 5,000 nodes, and most found no option they could take at once:
     * the improvement pass alone (no local search) then left queues 1,159 GPUs under their
     * guarantees. 24 nodes per 500 jobs (at least 24): none under guarantees and +6% priority-weighted
     * GPUs there, +2% at 1,000 nodes (24 per 2,000: +1.3% and the same at 1,000; 24 per 250: no better).
     */
    public void shareRankingsAmong(int pendingJobs) {
        rankingSize = (int) Math.max(RANKING_SIZE, (long) RANKING_SIZE * pendingJobs / RANKING_JOBS);
    }

    /**
     * As {@link #candidates(ClusterState, PendingJob, List, int)}; with {@code rotation >= 0} a
     * one-pod job takes the best node plus others from a ranking shared by every job of the same
     * shape (computed once per state), rotated so that similar jobs get different nodes; a gang
     * of several pods takes the tightest domain plus others rotated the same way
     * ({@link #spreadOverDomains}). Only for a state that does not change between calls.
     */
    public List<GangFit> candidates(ClusterState st, PendingJob job, List<Replica> reps, int k, int rotation) {
        List<GangFit> out = new ArrayList<>();
        if (k <= 0 || reps.isEmpty()) {
            return out;
        }
        if (rotation >= 0 && reps.size() == 1) {
            Replica r = reps.getFirst();
            int[] eligibleNodes = eligibleNodes(job);
            List<Integer> ranking = rankings.computeIfAbsent(
                    List.of(System.identityHashCode(st), System.identityHashCode(eligibleNodes), r.gpus(), String.valueOf(r.milli()),
                            r.topology(), r.cpuMillis(), r.memoryMiB(), String.valueOf(r.migProfile())),
                    key -> bestNodes(st, r, eligibleNodes, rankingSize));
            if (ranking.isEmpty()) {
                return out;
            }
            List<Integer> picks = new ArrayList<>(List.of(ranking.getFirst()));
            int others = ranking.size() - 1;
            for (int i = 0; i < k - 1 && i < others; i++) {
                picks.add(ranking.get(1 + Math.floorMod(rotation * (k - 1) + i, others)));
            }
            // the best fits often share one leaf; one pick elsewhere (the best fit there, from the
            // same ranking) lets the solver leave that leaf to a gang that needs it whole
            String leaf = leafOf(ranking.getFirst());
            if (picks.size() > 1 && picks.stream().allMatch(n -> leafOf(n).equals(leaf))) {
                ranking.stream().filter(n -> !leafOf(n).equals(leaf)).findFirst().ifPresent(n -> picks.set(picks.size() - 1, n));
            }
            for (int n : picks) {
                GangFit fit = single(st, r, n);
                if (fit != null) {
                    out.add(fit);
                }
            }
            return out;
        }
        NetworkLevel req = job.network().required();
        NetworkLevel pref = job.network().preferred();
        List<int[]> doms = new ArrayList<>(oneFabricDomains(job, reps));
        if (pref != null && pref.ordinal() > req.ordinal() && reps.size() > 1) {
            doms.addAll(domains(job, pref));
        }
        doms.addAll(domains(job, req));
        long minMilli = minGangMilli(job, reps);
        Replica first = reps.getFirst();
        if (rotation >= 0 && reps.size() > 1) {
            // as many domains per window as the shared rankings have nodes, two thirds (16 for 24 nodes)
            return spreadOverDomains(st, job, reps, orderedByTightness(st, doms, minMilli, rankingSize * 2 / 3), k, rotation);
        }
        for (int[] domain : orderedByTightness(st, doms, minMilli, 16)) {
            // seeds: the best-fit nodes for the biggest pod inside the domain
            List<Integer> seeds = bestNodes(st, first, domain, reps.size() == 1 || domain.length > 1 ? k : 1);
            for (int seed : seeds) {
                GangFit fit = reps.size() == 1 ? single(st, first, seed) : packSeeded(st, job, reps, domain, seed);
                if (fit != null && out.stream().noneMatch(o -> sameNodes(o, fit))) {
                    out.add(fit);
                    if (out.size() >= k) {
                        return out;
                    }
                }
            }
        }
        return out;
    }

    /**
     * True when the gang gets the default network wish: Gantry's own packing (a gauge), no
     * network wish or InfiniBand requirement of the job's own, and more GPUs than any node it may
     * use holds, so it must span nodes; then one InfiniBand fabric is worth a lot to it.
     */
    public boolean prefersOneFabric(PendingJob job, List<Replica> reps) {
        if (gauge == null || reps.size() < 2 || job.network().preferred() != null || job.requireInfiniBand()) {
            return false;
        }
        long total = reps.stream().mapToLong(Replica::gpuMilli).sum();
        long largest = largestNode.computeIfAbsent(signature(job), sig -> {
            long max = 0;
            for (int i : eligibleNodes(job)) {
                max = Math.max(max, nodes.get(i).gpus() * 1000L);
            }
            return max;
        });
        return total > largest;
    }

    /**
     * For a gang that {@link #prefersOneFabric}: its eligible nodes grouped by InfiniBand fabric
     * and leaf, then by fabric alone (nodes without a fabric are left out); otherwise empty.
     */
    private List<int[]> oneFabricDomains(PendingJob job, List<Replica> reps) {
        if (!prefersOneFabric(job, reps)) {
            return List.of();
        }
        return fabricDomains.computeIfAbsent(signature(job), sig -> {
            Map<List<String>, List<Integer>> byLeaf = new LinkedHashMap<>();
            Map<String, List<Integer>> byFabric = new LinkedHashMap<>();
            for (int i : eligibleNodes(job)) {
                Node n = nodes.get(i);
                if (n.ibFabric() == null) {
                    continue;
                }
                byFabric.computeIfAbsent(n.ibFabric(), x -> new ArrayList<>()).add(i);
                String leaf = n.topology().key(NetworkLevel.LEAF);
                if (leaf != null) {
                    byLeaf.computeIfAbsent(Arrays.asList(n.ibFabric(), leaf), x -> new ArrayList<>()).add(i);
                }
            }
            List<int[]> out = new ArrayList<>();
            byLeaf.values().forEach(g -> out.add(g.stream().mapToInt(Integer::intValue).toArray()));
            byFabric.values().forEach(g -> out.add(g.stream().mapToInt(Integer::intValue).toArray()));
            return out;
        });
    }

    /** How much slower the node's GPU model is than the fastest, in hundredths (0 without a gauge or speeds). */
    public int slowness(int node) {
        return slowness[node];
    }

    /** True when every node of the fit lies in one InfiniBand fabric. */
    public boolean oneFabric(List<Assigned> tasks) {
        String fabric = null;
        for (Assigned a : tasks) {
            String f = nodes.get(a.node()).ibFabric();
            if (f == null || fabric != null && !fabric.equals(f)) {
                return false;
            }
            fabric = f;
        }
        return true;
    }

    private String leafOf(int node) {
        String leaf = nodes.get(node).topology().leaf();
        return leaf == null ? "" : leaf;
    }

    private GangFit single(ClusterState st, Replica r, int node) {
        int[] g = choose(st, node, r);
        return g == null ? null : new GangFit(List.of(new Assigned(r, node, g)), true);
    }

    /** Packs the gang inside one domain, filling the {@code seed} node first. */
    private GangFit packSeeded(ClusterState st, PendingJob job, List<Replica> reps, int[] domain, int seed) {
        return pack(st, job, reps, domain, new ArrayList<>(List.of(seed)));
    }

    private static boolean sameNodes(GangFit a, GangFit b) {
        if (a.tasks().size() != b.tasks().size()) {
            return false;
        }
        for (int i = 0; i < a.tasks().size(); i++) {
            if (a.tasks().get(i).node() != b.tasks().get(i).node() || !Arrays.equals(a.tasks().get(i).gpus(), b.tasks().get(i).gpus())) {
                return false;
            }
        }
        return true;
    }

    /**
     * A node's free GPUs and MIG devices in thousandths: what a domain's gangs are weighed by. For a gang of
     * whole GPUs or of MIG devices alone it overstates (it counts the other kind too), which only costs a
     * domain tried in vain; placing decides.
     */
    private static long capacity(ClusterState st, int node) {
        return st.freeMilli(node) + st.freeMigMilli(node);
    }

    /**
     * A multi-pod gang's options when similar gangs share the state: the tightest domain where it
     * fits, then one domain each from further down the order, rotated so that similar gangs aim
     * at different domains. Before, every option of a gang came from the tightest domain where it
     * fitted (different seed nodes), so all gangs of a kind aimed at the same leaf or spine and at
     * most one of them could be placed there. Reproducible mode, improvement pass only,
     * netPriorityGpus: 200 nodes 746.7 -> 806.9, 1,000 nodes 3310.4 -> 3349.0 (5,000 moves of
     * local search: 3347.0 -> 3497.4), 5,000 nodes 16043.3 -> 16798.4.
     */
    private List<GangFit> spreadOverDomains(ClusterState st, PendingJob job, List<Replica> reps, List<int[]> ordered, int k, int rotation) {
        List<GangFit> out = new ArrayList<>();
        int firstDomain = -1;
        for (int d = 0; d < ordered.size() && out.isEmpty(); d++) {
            GangFit fit = bestSeeded(st, job, reps, ordered.get(d));
            if (fit != null) {
                out.add(fit);
                firstDomain = d;
            }
        }
        int others = ordered.size() - firstDomain - 1;
        for (int i = 0; i < others && out.size() < k; i++) {
            int d = firstDomain + 1 + Math.floorMod(rotation * (k - 1) + i, others);
            GangFit fit = bestSeeded(st, job, reps, ordered.get(d));
            if (fit != null && out.stream().noneMatch(o -> sameNodes(o, fit))) {
                out.add(fit);
            }
        }
        return out;
    }

    /** The gang packed in the domain from the best-fit node for its biggest pod, or null. */
    private GangFit bestSeeded(ClusterState st, PendingJob job, List<Replica> reps, int[] domain) {
        List<Integer> seeds = bestNodes(st, reps.getFirst(), domain, 1);
        return seeds.isEmpty() ? null : packSeeded(st, job, reps, domain, seeds.getFirst());
    }

    private static List<int[]> orderedByTightness(ClusterState st, List<int[]> doms, long minMilli, int limit) {
        List<long[]> order = new ArrayList<>();
        for (int d = 0; d < doms.size(); d++) {
            long cap = 0;
            for (int i : doms.get(d)) {
                cap += capacity(st, i);
            }
            if (cap >= minMilli) {
                order.add(new long[] {cap, d});
            }
        }
        order.sort((a, b) -> a[0] != b[0] ? Long.compare(a[0], b[0]) : Long.compare(a[1], b[1]));
        return order.stream().limit(Math.max(16, limit)).map(o -> doms.get((int) o[1])).toList();
    }

    /** Off only for tests that compare packing with and without remembered ranks. */
    private boolean rememberRanks = true;

    /** This packer working every rank out afresh (for tests: the plans must be the same). */
    GangPacker withoutRememberedRanks() {
        rememberRanks = false;
        return this;
    }

    /** The remembered ranks of the pod's shape on the state (with a gauge only: without one a rank costs less than a look-up). */
    private NodeRanks ranksOf(ClusterState st, Replica r) {
        if (gauge == null || !rememberRanks) {
            return null;
        }
        return remembered.computeIfAbsent(st, k -> new HashMap<>()).computeIfAbsent(PodShape.of(r), k -> new NodeRanks(nodes.size()));
    }

    /**
     * The pod's rank on the node ({@link #NO_FIT} when {@link #choose} finds no GPUs), worked out
     * again only when the node has changed since it was remembered; {@code memo.gpus[node]} then
     * holds the GPUs chosen. The caller has checked that the node has the GPUs ({@code left >= 0}).
     */
    private long rankRemembered(NodeRanks memo, ClusterState st, int node, Replica r, long left) {
        int now = st.changes(node) + 1;
        if (memo.validAt[node] != now) {
            int[] g = choose(st, node, r);
            memo.gpus[node] = g;
            memo.rank[node] = g == null ? NO_FIT : rank(st, node, r, g, left);
            memo.validAt[node] = now;
        }
        return memo.rank[node];
    }

    /** The {@code k} nodes of the domain where the pod fits best (see {@link #rank}). */
    private List<Integer> bestNodes(ClusterState st, Replica r, int[] domain, int k) {
        // bounded top-k (k is small): the domain may hold thousands of nodes
        long[] best = new long[k];
        int[] node = new int[k];
        int size = 0;
        NodeRanks memo = ranksOf(st, r);
        for (int n : domain) {
            long freeMilli = st.freeMilliFor(n, r);
            if (freeMilli < r.gpuMilli()) {
                continue;
            }
            long l = freeMilli - r.gpuMilli();
            if (gauge == null && size == k && l >= best[k - 1]) {
                continue; // without a gauge the rank is the leftover: no need to look closer
            }
            long key;
            if (memo != null) {
                key = rankRemembered(memo, st, n, r, l);
                if (key == NO_FIT) {
                    continue;
                }
            } else {
                int[] g = choose(st, n, r);
                if (g == null) {
                    continue;
                }
                key = rank(st, n, r, g, l);
            }
            if (size == k && key >= best[k - 1]) {
                continue;
            }
            int pos = size < k ? size++ : k - 1;
            while (pos > 0 && best[pos - 1] > key) {
                best[pos] = best[pos - 1];
                node[pos] = node[pos - 1];
                pos--;
            }
            best[pos] = key;
            node[pos] = n;
        }
        List<Integer> out = new ArrayList<>(size);
        for (int i = 0; i < size; i++) {
            out.add(node[i]);
        }
        return out;
    }

    /** Packs the gang inside one domain; null when fewer than minAvailable pods fit. */
    public GangFit packInDomain(ClusterState st, PendingJob job, List<Replica> reps, int[] domain) {
        return pack(st, job, reps, domain, new ArrayList<>());
    }

    /** Places replicas one by one, preferring nodes already {@code used}; state is left as found. */
    private GangFit pack(ClusterState st, PendingJob job, List<Replica> reps, int[] domain, List<Integer> used) {
        List<Assigned> placed = new ArrayList<>();
        int failed = 0;
        for (Replica r : reps) {
            Assigned a = placeOne(st, r, domain, used);
            if (a == null) {
                failed++;
                if (reps.size() - failed < job.minAvailable()) {
                    break;
                }
                continue;
            }
            st.take(a.node(), r, a.gpus());
            placed.add(a);
            if (!used.contains(a.node())) {
                used.add(a.node());
            }
        }
        for (Assigned a : placed) {
            st.release(a.node(), a.replica(), a.gpus());
        }
        return placed.size() < job.minAvailable() ? null : new GangFit(placed, failed == 0);
    }

    private Assigned placeOne(ClusterState st, Replica r, int[] domain, List<Integer> used) {
        for (int n : used) {
            int[] g = st.pick(n, r);
            if (g != null) {
                return new Assigned(r, n, g);
            }
        }
        int bestNode = -1;
        int[] bestGpus = null;
        long bestRank = Long.MAX_VALUE;
        NodeRanks memo = ranksOf(st, r);
        for (int n : domain) {
            // plain best fit puts a pod without GPUs on the first node with room; the gauge weighs every node
            long freeMilli = r.gpuMilli() == 0 && gauge == null ? 0 : st.freeMilliFor(n, r);
            if (freeMilli < r.gpuMilli()) {
                continue;
            }
            long left = freeMilli - r.gpuMilli();
            if (gauge == null && left >= bestRank) {
                continue;
            }
            int[] g;
            long rank;
            if (memo != null) {
                rank = rankRemembered(memo, st, n, r, left);
                g = memo.gpus[n];
                if (rank == NO_FIT) {
                    continue;
                }
            } else {
                g = choose(st, n, r);
                if (g == null) {
                    continue;
                }
                rank = rank(st, n, r, g, left);
            }
            if (rank < bestRank) {
                bestNode = n;
                bestGpus = g;
                bestRank = rank;
                if (gauge == null && left == 0) {
                    break;
                }
            }
        }
        return bestNode < 0 ? null : new Assigned(r, bestNode, bestGpus);
    }

    public Node node(int i) {
        return nodes.get(i);
    }

}
