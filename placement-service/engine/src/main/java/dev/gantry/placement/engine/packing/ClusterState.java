package dev.gantry.placement.engine.packing;

import dev.gantry.placement.engine.domain.GpuTopology;
import dev.gantry.placement.engine.domain.Node;
import dev.gantry.placement.engine.domain.RunningJob;
import dev.gantry.placement.engine.domain.RunningTask;
import dev.gantry.placement.engine.domain.Scenario;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Mutable occupancy of the cluster while a planner works: free whole GPUs as one bit mask per
 * node (a node has at most 64 GPUs), milli-GPUs held by sharing tasks, free CPU and memory.
 * Also chooses concrete GPU indices for a replica on a node (islands, NUMA, sharing).
 */
public final class ClusterState {
    private final List<Node> nodes;
    private final Map<String, Integer> index;
    private final long[][] islandMasks;
    private final long[][] numaMasks;
    private final long[] free;
    private final int[][] shared;
    private final long[] cpuFree;
    private final long[] memFree;
    /** GPUs to take first when a choice remains (e.g. free in another state), or null. */
    private long[] preferred;

    /** Every GPU free, nothing running. */
    public ClusterState(Scenario scenario) {
        this.nodes = scenario.nodes();
        int n = nodes.size();
        index = new HashMap<>(n * 2);
        islandMasks = new long[n][];
        numaMasks = new long[n][];
        free = new long[n];
        shared = new int[n][];
        cpuFree = new long[n];
        memFree = new long[n];
        for (int i = 0; i < n; i++) {
            Node node = nodes.get(i);
            index.put(node.name(), i);
            islandMasks[i] = masks(node.nvlinkIslands());
            numaMasks[i] = masks(node.numaNodes());
            free[i] = node.gpus() == 64 ? -1L : (1L << node.gpus()) - 1;
            cpuFree[i] = node.cpuMillis();
            memFree[i] = node.memoryMiB();
        }
    }

    private ClusterState(ClusterState o) {
        nodes = o.nodes;
        index = o.index;
        islandMasks = o.islandMasks;
        numaMasks = o.numaMasks;
        free = o.free.clone();
        shared = new int[o.shared.length][];
        for (int i = 0; i < shared.length; i++) {
            shared[i] = o.shared[i] == null ? null : o.shared[i].clone();
        }
        cpuFree = o.cpuFree.clone();
        memFree = o.memFree.clone();
        preferred = o.preferred;
    }

    /**
     * Makes index choices prefer the GPUs that are free in {@code other}: options taken on a
     * state with movable work removed then overlap as little running work as they can, so the
     * evictions they need stay few.
     */
    public void preferFreeIn(ClusterState other) {
        preferred = other.free.clone();
    }

    private static long[] masks(List<List<Integer>> groups) {
        long[] out = new long[groups.size()];
        for (int g = 0; g < groups.size(); g++) {
            for (int idx : groups.get(g)) {
                out[g] |= 1L << idx;
            }
        }
        return out;
    }

    public ClusterState copy() {
        return new ClusterState(this);
    }

    public List<Node> nodes() {
        return nodes;
    }

    public int size() {
        return nodes.size();
    }

    public Node node(int i) {
        return nodes.get(i);
    }

    public int indexOf(String nodeName) {
        Integer i = index.get(nodeName);
        if (i == null) {
            throw new IllegalArgumentException("unknown node " + nodeName);
        }
        return i;
    }

    public int freeGpus(int node) {
        return Long.bitCount(free[node]);
    }

    public long freeMask(int node) {
        return free[node];
    }

    public long cpuFree(int node) {
        return cpuFree[node];
    }

    public long memFree(int node) {
        return memFree[node];
    }

    /** Free GPUs as shareable milli-GPUs: whole free GPUs plus room left on shared ones. */
    public long freeMilli(int node) {
        long m = 1000L * freeGpus(node);
        if (shared[node] != null) {
            for (int s : shared[node]) {
                if (s > 0) {
                    m += 1000 - s;
                }
            }
        }
        return m;
    }

    /** Milli-GPUs sharing tasks hold on one GPU (0 when free or held whole). */
    public int sharedMilli(int node, int gpu) {
        return shared[node] == null ? 0 : shared[node][gpu];
    }

    /** True when no GPU of the node is held (whole or shared). */
    public boolean wholeFree(int node) {
        return freeGpus(node) == nodes.get(node).gpus();
    }

    public void occupy(RunningJob job) {
        for (RunningTask t : job.tasks()) {
            take(indexOf(t.node()), t.gpus().stream().mapToInt(Integer::intValue).toArray(), t.gpuMilli(), t.cpuMillis(), t.memoryMiB());
        }
    }

    public void release(RunningJob job) {
        for (RunningTask t : job.tasks()) {
            release(indexOf(t.node()), t.gpus().stream().mapToInt(Integer::intValue).toArray(), t.gpuMilli(), t.cpuMillis(), t.memoryMiB());
        }
    }

    public void take(int node, int[] gpus, Integer milli, long cpu, long mem) {
        for (int g : gpus) {
            if (milli == null) {
                free[node] &= ~(1L << g);
            } else {
                if (shared[node] == null) {
                    shared[node] = new int[nodes.get(node).gpus()];
                }
                shared[node][g] += milli;
                free[node] &= ~(1L << g);
            }
        }
        cpuFree[node] -= cpu;
        memFree[node] -= mem;
    }

    public void release(int node, int[] gpus, Integer milli, long cpu, long mem) {
        for (int g : gpus) {
            if (milli == null) {
                free[node] |= 1L << g;
            } else {
                shared[node][g] -= milli;
                if (shared[node][g] == 0) {
                    free[node] |= 1L << g;
                }
            }
        }
        cpuFree[node] += cpu;
        memFree[node] += mem;
    }

    public void take(int node, Replica r, int[] gpus) {
        take(node, gpus, r.milli(), r.cpuMillis(), r.memoryMiB());
    }

    public void release(int node, Replica r, int[] gpus) {
        release(node, gpus, r.milli(), r.cpuMillis(), r.memoryMiB());
    }

    /**
     * GPU indices for the replica on the node, or null when it does not fit (CPU, memory, GPUs,
     * island/NUMA, sharing). Best fit inside the node: the tightest group that holds the replica,
     * so large islands stay whole for large replicas.
     */
    public int[] pick(int node, Replica r) {
        if (cpuFree[node] < r.cpuMillis() || memFree[node] < r.memoryMiB()) {
            return null;
        }
        if (r.sharing()) {
            return pickShared(node, r);
        }
        if (r.gpus() == 0) {
            return new int[0];
        }
        long f = free[node];
        if (Long.bitCount(f) < r.gpus()) {
            return null;
        }
        long[] groups = switch (r.topology()) {
            case NVLINK -> islandMasks[node];
            case NUMA -> numaMasks[node];
            case ANY -> null;
        };
        if (groups != null) {
            long best = tightest(f, groups, r.gpus());
            return best == 0 ? null : lowest(f & best, r.gpus(), node);
        }
        // "any": still prefer one island or NUMA node (better for the job, keeps the others whole)
        long best = tightest(f, islandMasks[node], r.gpus());
        if (best == 0) {
            best = tightest(f, numaMasks[node], r.gpus());
        }
        return lowest(best == 0 ? f : f & best, r.gpus(), node);
    }

    private static long tightest(long free, long[] groups, int need) {
        long best = 0;
        int bestFree = Integer.MAX_VALUE;
        for (long g : groups) {
            int c = Long.bitCount(free & g);
            if (c >= need && c < bestFree) {
                best = g;
                bestFree = c;
            }
        }
        return best;
    }

    private int[] lowest(long mask, int count, int node) {
        if (preferred == null) {
            return lowest(mask, count);
        }
        long first = mask & preferred[node];
        if (Long.bitCount(first) >= count) {
            return lowest(first, count);
        }
        int[] out = new int[count];
        int[] a = lowest(first, Long.bitCount(first));
        int[] b = lowest(mask & ~first, count - a.length);
        System.arraycopy(a, 0, out, 0, a.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }

    /**
     * How far apart the GPUs lie on the node: 0 within one NVLink island, 1 within one NUMA
     * node, 2 otherwise (a single GPU, or none, is 0). Multi-GPU pods run fastest on one island.
     */
    public int spread(int node, int[] gpus) {
        if (gpus.length < 2) {
            return 0;
        }
        long mask = 0;
        for (int g : gpus) {
            mask |= 1L << g;
        }
        if (within(mask, islandMasks[node])) {
            return 0;
        }
        return within(mask, numaMasks[node]) ? 1 : 2;
    }

    private static boolean within(long mask, long[] groups) {
        for (long g : groups) {
            if ((mask & ~g) == 0) {
                return true;
            }
        }
        return false;
    }

    /** The GPU indices set in a mask, ascending. */
    public static int[] indices(long mask) {
        return lowest(mask, Long.bitCount(mask));
    }

    private static int[] lowest(long mask, int count) {
        int[] out = new int[count];
        long m = mask;
        for (int i = 0; i < count; i++) {
            int g = Long.numberOfTrailingZeros(m);
            out[i] = g;
            m &= m - 1;
        }
        return out;
    }

    private int[] pickShared(int node, Replica r) {
        Node n = nodes.get(node);
        if (!n.gpuSharing()) {
            return null;
        }
        long allowed = switch (r.topology()) {
            case NVLINK -> or(islandMasks[node]);
            case NUMA -> or(numaMasks[node]);
            case ANY -> n.gpus() == 64 ? -1L : (1L << n.gpus()) - 1;
        };
        int[] s = shared[node];
        int best = -1;
        if (s != null) {
            for (int g = 0; g < s.length; g++) {
                if ((allowed & (1L << g)) != 0 && s[g] > 0 && s[g] + r.milli() <= 1000 && (best < 0 || s[g] > s[best])) {
                    best = g;
                }
            }
        }
        if (best >= 0) {
            return new int[] {best};
        }
        long f = free[node] & allowed;
        if (f == 0) {
            return null;
        }
        // open a fresh GPU in the fullest group, so whole groups stay free for whole-GPU jobs
        long[] groups = islandMasks[node].length > 0 ? islandMasks[node] : numaMasks[node];
        long pickFrom = f;
        int fewest = Integer.MAX_VALUE;
        for (long g : groups) {
            int c = Long.bitCount(f & g);
            if (c > 0 && c < fewest) {
                fewest = c;
                pickFrom = f & g;
            }
        }
        return new int[] {Long.numberOfTrailingZeros(pickFrom)};
    }

    /**
     * Every GPU a sharing replica could take on the node: each shared GPU with room for it, and one
     * fully free GPU (for packing, free GPUs of a node are alike). Empty when it cannot go there.
     */
    public int[] sharingChoices(int node, Replica r) {
        Node n = nodes.get(node);
        if (!r.sharing() || !n.gpuSharing() || cpuFree[node] < r.cpuMillis() || memFree[node] < r.memoryMiB()) {
            return new int[0];
        }
        long allowed = switch (r.topology()) {
            case NVLINK -> or(islandMasks[node]);
            case NUMA -> or(numaMasks[node]);
            case ANY -> allMask(node);
        };
        int[] s = shared[node];
        int[] out = new int[n.gpus()];
        int count = 0;
        for (int g = 0; g < n.gpus(); g++) {
            if ((allowed & (1L << g)) != 0 && s != null && s[g] > 0 && s[g] + r.milli() <= 1000) {
                out[count++] = g;
            }
        }
        long fresh = free[node] & allowed;
        if (fresh != 0) {
            out[count++] = Long.numberOfTrailingZeros(fresh);
        }
        return java.util.Arrays.copyOf(out, count);
    }

    private static long or(long[] masks) {
        long m = 0;
        for (long x : masks) {
            m |= x;
        }
        return m;
    }

    private long allMask(int node) {
        int g = nodes.get(node).gpus();
        return g == 64 ? -1L : (1L << g) - 1;
    }

    /** The topology groups' masks of a node, for reasons and option generation. */
    public long[] groupMasks(int node, GpuTopology topology) {
        return switch (topology) {
            case NVLINK -> islandMasks[node];
            case NUMA -> numaMasks[node];
            case ANY -> new long[] {allMask(node)};
        };
    }
}
