package dev.gantry.placement.engine.packing;

import dev.gantry.placement.engine.domain.GpuTopology;
import dev.gantry.placement.engine.domain.MigDevice;
import dev.gantry.placement.engine.domain.MigProfiles;
import dev.gantry.placement.engine.domain.Node;
import dev.gantry.placement.engine.domain.RunningJob;
import dev.gantry.placement.engine.domain.RunningTask;
import dev.gantry.placement.engine.domain.Scenario;
import dev.gantry.placement.engine.domain.TaskPlacement;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Mutable occupancy of the cluster while a planner works: free whole GPUs as one bit mask per
 * node (a node has at most 64 GPUs), milli-GPUs held by sharing tasks, free CPU and memory.
 * Also chooses concrete GPU indices for a replica on a node (islands, NUMA, sharing).
 *
 * <p>MIG: a node's MIG devices are a second mask (at most 64 per node). Where this class and the packing code
 * pass a pod's devices as {@code int[]}, a value below {@link #MIG_SLOT} is a GPU index and {@code MIG_SLOT + k}
 * the node's {@code k}-th MIG device ({@link Node#migDevices()} order): so the packer, the solver's options
 * and its "used twice" rule treat a MIG device as a device of its own without a second code path. GPUs in MIG
 * mode are never free: whole-GPU and sharing pods cannot have them. Plans and running tasks name MIG devices
 * by id ({@link #gpuIndices}, {@link #migIds}, {@link #slots(RunningTask)} convert).
 */
public final class ClusterState {
    /** The first device slot that is a MIG device, not a GPU index. */
    public static final int MIG_SLOT = 64;

    private final List<Node> nodes;
    private final Map<String, Integer> index;
    private final long[][] islandMasks;
    private final long[][] numaMasks;
    private final long[] free;
    private final int[][] shared;
    private final long[] cpuFree;
    private final long[] memFree;
    /** Per node, each MIG device's profile (null: no MIG devices), and the position of each device id. */
    private final String[][] migProfiles;
    private final List<Map<String, Integer>> migPositions;
    private final long[] migFree;
    /** GPUs to take first when a choice remains (e.g. free in another state), or null. */
    private long[] preferred;
    private long[] preferredMig;
    /**
     * Per node, how often it has changed: a memo of per-node figures (a packer's ranks) is valid
     * while the count it was taken at still holds. A copy starts its own counts.
     */
    private final int[] changes;

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
        migProfiles = new String[n][];
        migPositions = new ArrayList<>(n);
        migFree = new long[n];
        changes = new int[n];
        for (int i = 0; i < n; i++) {
            Node node = nodes.get(i);
            index.put(node.name(), i);
            islandMasks[i] = masks(node.nvlinkIslands());
            numaMasks[i] = masks(node.numaNodes());
            free[i] = node.gpus() == 64 ? -1L : (1L << node.gpus()) - 1;
            cpuFree[i] = node.cpuMillis();
            memFree[i] = node.memoryMiB();
            List<MigDevice> migs = node.migDevices();
            if (migs.isEmpty()) {
                migPositions.add(Map.of());
                continue;
            }
            int count = Math.min(migs.size(), 64);
            migProfiles[i] = new String[count];
            Map<String, Integer> positions = new HashMap<>(count * 2);
            for (int k = 0; k < count; k++) {
                migProfiles[i][k] = migs.get(k).profile();
                positions.put(migs.get(k).id(), k);
            }
            migPositions.add(positions);
            migFree[i] = count == 64 ? -1L : (1L << count) - 1;
            free[i] &= ~node.migGpuMask(); // a GPU in MIG mode is given out as its MIG devices only
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
        migProfiles = o.migProfiles;
        migPositions = o.migPositions;
        migFree = o.migFree.clone();
        preferred = o.preferred;
        preferredMig = o.preferredMig;
        changes = new int[o.changes.length];
    }

    /**
     * Makes index choices prefer the GPUs that are free in {@code other}: options taken on a
     * state with movable work removed then overlap as little running work as they can, so the
     * evictions they need stay few.
     */
    public void preferFreeIn(ClusterState other) {
        preferred = other.free.clone();
        preferredMig = other.migFree.clone();
        for (int i = 0; i < changes.length; i++) {
            changes[i]++; // index choices may differ on every node
        }
    }

    /** How often the node has changed in this state (see {@link #changes}). */
    public int changes(int node) {
        return changes[node];
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
            int node = indexOf(t.node());
            take(node, slots(node, t.gpus(), t.migDevices()), t.gpuMilli(), t.cpuMillis(), t.memoryMiB());
        }
    }

    public void release(RunningJob job) {
        for (RunningTask t : job.tasks()) {
            int node = indexOf(t.node());
            release(node, slots(node, t.gpus(), t.migDevices()), t.gpuMilli(), t.cpuMillis(), t.memoryMiB());
        }
    }

    public void take(int node, int[] gpus, Integer milli, long cpu, long mem) {
        changes[node]++;
        for (int g : gpus) {
            if (g >= MIG_SLOT) {
                migFree[node] &= ~(1L << (g - MIG_SLOT));
            } else if (milli == null) {
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
        changes[node]++;
        for (int g : gpus) {
            if (g >= MIG_SLOT) {
                migFree[node] |= 1L << (g - MIG_SLOT);
            } else if (milli == null) {
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
        if (r.mig()) {
            return pickMig(node, r);
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
        if (gpus.length < 2 || gpus[0] >= MIG_SLOT) {
            return 0; // MIG devices have no NVLink between them
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

    // --- MIG devices ---

    /** Free MIG devices of the replica's profile on the node, as slots ({@link #MIG_SLOT} + k); null when too few. */
    private int[] pickMig(int node, Replica r) {
        long candidates = migFree(node, r.migProfile());
        if (Long.bitCount(candidates) < r.gpus()) {
            return null;
        }
        long first = preferredMig == null ? candidates : candidates & preferredMig[node];
        int[] picked;
        if (Long.bitCount(first) >= r.gpus()) {
            picked = lowest(first, r.gpus());
        } else {
            int[] a = lowest(first, Long.bitCount(first));
            int[] b = lowest(candidates & ~first, r.gpus() - a.length);
            picked = Arrays.copyOf(a, r.gpus());
            System.arraycopy(b, 0, picked, a.length, b.length);
        }
        for (int i = 0; i < picked.length; i++) {
            picked[i] += MIG_SLOT;
        }
        return picked;
    }

    /** The node's free MIG devices, of any profile, as a mask over its MIG devices (bit k: its k-th). */
    public long migFreeMask(int node) {
        return migFree[node];
    }

    /** The free MIG devices of {@code profile} on the node, as a mask over its MIG devices. */
    public long migFree(int node, String profile) {
        String[] profiles = migProfiles[node];
        if (profiles == null || profile == null) {
            return 0;
        }
        long out = 0;
        long f = migFree[node];
        while (f != 0) {
            int k = Long.numberOfTrailingZeros(f);
            f &= f - 1;
            if (profile.equals(profiles[k])) {
                out |= 1L << k;
            }
        }
        return out;
    }

    /** How many MIG devices of {@code profile} the node has in all (free or not). */
    public int migDevices(int node, String profile) {
        String[] profiles = migProfiles[node];
        int n = 0;
        if (profiles != null) {
            for (String p : profiles) {
                n += p.equals(profile) ? 1 : 0;
            }
        }
        return n;
    }

    /** The free MIG devices of the node in thousandths of a GPU (their slices of seven). */
    public long freeMigMilli(int node) {
        String[] profiles = migProfiles[node];
        if (profiles == null) {
            return 0;
        }
        long milli = 0;
        long f = migFree[node];
        while (f != 0) {
            int k = Long.numberOfTrailingZeros(f);
            f &= f - 1;
            milli += MigProfiles.milli(profiles[k]);
        }
        return milli;
    }

    /** What the node has free for the replica, in thousandths: free MIG devices of its profile, or free (shareable) GPUs. */
    public long freeMilliFor(int node, Replica r) {
        if (r.mig()) {
            return Long.bitCount(migFree(node, r.migProfile())) * (long) MigProfiles.milli(r.migProfile());
        }
        return freeMilli(node);
    }

    /** A running task's devices as slots: its GPU indices, then its MIG devices (ids the node does not have are left out). */
    public int[] slots(RunningTask t) {
        return slots(indexOf(t.node()), t.gpus(), t.migDevices());
    }

    /** A placed task's devices as slots. */
    public int[] slots(TaskPlacement t) {
        return slots(indexOf(t.node()), t.gpus(), t.migDevices());
    }

    private int[] slots(int node, List<Integer> gpus, List<String> migIds) {
        if (migIds.isEmpty()) {
            return gpus.stream().mapToInt(Integer::intValue).toArray();
        }
        int[] out = new int[gpus.size() + migIds.size()];
        int n = 0;
        for (int g : gpus) {
            out[n++] = g;
        }
        Map<String, Integer> positions = migPositions.get(node);
        for (String id : migIds) {
            Integer k = positions.get(id);
            if (k != null) {
                out[n++] = MIG_SLOT + k;
            }
        }
        return n == out.length ? out : Arrays.copyOf(out, n);
    }

    /** The GPU indices among slots, ascending. */
    public static List<Integer> gpuIndices(int[] slots) {
        return Arrays.stream(slots).filter(s -> s < MIG_SLOT).sorted().boxed().toList();
    }

    /** The ids of the MIG devices among slots, in slot order. */
    public static List<String> migIds(Node node, int[] slots) {
        return Arrays.stream(slots).filter(s -> s >= MIG_SLOT).sorted()
                .mapToObj(s -> node.migDevices().get(s - MIG_SLOT).id()).toList();
    }

    /** The plan record of a pod put on {@code slots} of the node. */
    public TaskPlacement placement(int node, Replica r, int[] slots) {
        Node n = nodes.get(node);
        return new TaskPlacement(r.task(), n.name(), gpuIndices(slots), r.milli(), migIds(n, slots));
    }

    /** A pod put on {@code slots} of the node, as a running task. */
    public RunningTask running(int node, Replica r, int[] slots) {
        Node n = nodes.get(node);
        return new RunningTask(r.task(), n.name(), gpuIndices(slots), r.cpuMillis(), r.memoryMiB(), r.milli(), r.migProfile(), migIds(n, slots));
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
