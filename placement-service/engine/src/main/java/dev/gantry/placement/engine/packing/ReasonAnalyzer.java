package dev.gantry.placement.engine.packing;

import dev.gantry.placement.engine.domain.GpuTopology;
import dev.gantry.placement.engine.domain.NetworkLevel;
import dev.gantry.placement.engine.domain.Node;
import dev.gantry.placement.engine.domain.PendingJob;
import dev.gantry.placement.engine.domain.Queue;
import dev.gantry.placement.engine.domain.RunningJob;
import dev.gantry.placement.engine.domain.RunningTask;
import dev.gantry.placement.engine.domain.Scenario;
import dev.gantry.placement.engine.domain.Taint;
import dev.gantry.placement.engine.domain.TaskGroup;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * Why a pending job stays pending, in words a user can act on: the first requirement that blocks
 * it (queue capability, GPU model, node selector, taints, sharing, MIG devices of the profile, pod shape, gang size under the
 * required network domain), and by how much, measured on the cluster as the plan leaves it.
 * Typed like kube-scheduler's codes: {@link Kind#UNRESOLVABLE} will not change by waiting.
 */
public final class ReasonAnalyzer {

    /**
     * What blocks: capacity (waiting or evicting can help), the queue's capability (only the
     * queue's own work finishing helps), or the job itself (it must change).
     */
    public enum Kind { CAPACITY, QUOTA, UNRESOLVABLE }

    /** A reason with its kind. */
    public record Reason(Kind kind, String text) {
    }

    private final Scenario sc;
    private final ClusterState st;
    private final QueueLedger ledger;
    private final GangPacker packer;
    private Map<Integer, List<TaskOnNode>> runningByNode;
    /** Jobs with the same requirements and shape get the same answer: thousands of unplaced jobs share a few. */
    private final Map<List<Object>, Reason> cache = new HashMap<>();
    private final Map<List<int[]>, int[]> bestDomains = new java.util.IdentityHashMap<>();
    private final Map<List<Object>, Long> reclaims = new HashMap<>();
    private final Map<List<Object>, long[]> largest = new HashMap<>();

    public ReasonAnalyzer(Scenario sc, ClusterState st, QueueLedger ledger, GangPacker packer) {
        this.sc = sc;
        this.st = st;
        this.ledger = ledger;
        this.packer = packer;
    }

    public String explain(PendingJob job) {
        return analyze(job).text();
    }

    public Reason analyze(PendingJob job) {
        List<Object> key = List.of(job.queue(), job.priority(), job.taskGroups().stream().map(g -> List.of(g.replicas(), g.gpusPerReplica(),
                        String.valueOf(g.gpuMilli()), g.cpuMillis(), g.memoryMiB(), String.valueOf(g.migProfile()))).toList(), job.minAvailable(), job.gpuModels(),
                job.gpuTopology(), job.network(), job.requireInfiniBand(), job.nodeSelector(), job.tolerations());
        Reason cached = cache.get(key);
        if (cached == null) {
            cached = compute(job);
            cache.put(key, cached);
        }
        return cached;
    }

    private Reason compute(PendingJob job) {
        List<Replica> reps = Replica.of(job);
        long minMilli = GangPacker.minGangMilli(job, reps);
        String blockedQueue = ledger.blockedBy(job.queue(), minMilli);
        if (blockedQueue != null) {
            Queue q = ledger.queue(blockedQueue);
            return new Reason(Kind.QUOTA, "queue " + blockedQueue + " is at its capability: it holds " + gpus(ledger.after(blockedQueue))
                    + " of " + q.capabilityGpus() + " GPUs and the gang needs " + gpus(minMilli) + " more");
        }
        int[] eligible = packer.eligibleNodes(job);
        if (eligible.length == 0) {
            return new Reason(Kind.UNRESOLVABLE, noEligibleNode(job));
        }
        Reason mig = migDevices(job, eligible);
        if (mig != null) {
            return mig;
        }
        Replica biggest = reps.getFirst();
        String shape = podShape(job, biggest, eligible);
        if (shape != null) {
            return new Reason(Kind.UNRESOLVABLE, shape);
        }
        return new Reason(Kind.CAPACITY, gangSize(job, reps, minMilli));
    }

    /**
     * For a job with MIG pods: no eligible node has devices of the profile, or a pod wants more of them than any
     * node has (the job must change), or too few are free now (capacity). Null when every MIG group's devices are
     * free, so what blocks is something else.
     */
    private Reason migDevices(PendingJob job, int[] eligible) {
        for (TaskGroup g : job.taskGroups()) {
            String profile = g.migProfile();
            if (profile == null) {
                continue;
            }
            int most = 0;
            long total = 0;
            long free = 0;
            Set<String> others = new java.util.TreeSet<>();
            for (int i : eligible) {
                int has = st.migDevices(i, profile);
                most = Math.max(most, has);
                total += has;
                free += Long.bitCount(st.migFree(i, profile));
                st.node(i).migDevices().forEach(d -> others.add(d.profile()));
            }
            if (total == 0) {
                return new Reason(Kind.UNRESOLVABLE, "no eligible node" + modelScope(job) + " has MIG devices of profile " + profile
                        + (others.isEmpty() ? " (none of the " + eligible.length + " has MIG devices)" : " (they have " + String.join(", ", others) + ")"));
            }
            if (most < g.gpusPerReplica()) {
                return new Reason(Kind.UNRESOLVABLE, "each pod (" + g.name() + ") needs " + g.gpusPerReplica() + " MIG devices " + profile
                        + " on one node; the most any eligible node has is " + most + ": use more pods with fewer devices");
            }
            long need = job.minAvailable() >= job.totalReplicas() ? (long) g.gpusPerReplica() * g.replicas() : g.gpusPerReplica();
            if (free < need) {
                return new Reason(Kind.CAPACITY, "needs " + need + " MIG device" + (need == 1 ? "" : "s") + " " + profile + " (" + g.name() + ": "
                        + g.replicas() + " x " + g.gpusPerReplica() + "); the eligible nodes have " + free + " free of " + total);
            }
        }
        return null;
    }

    private String noEligibleNode(PendingJob job) {
        List<Node> candidates = sc.nodes().stream().filter(Node::schedulable).toList();
        if (candidates.isEmpty()) {
            return "no schedulable node in the cluster";
        }
        boolean needsGpus = job.taskGroups().stream().anyMatch(g -> g.gpusPerReplica() > 0);
        if (needsGpus && !job.gpuModels().isEmpty()) {
            List<Node> withModel = candidates.stream().filter(n -> job.gpuModels().contains(n.gpuModel())).toList();
            if (withModel.isEmpty()) {
                Set<String> models = candidates.stream().map(Node::gpuModel).filter(m -> m != null).collect(Collectors.toCollection(java.util.TreeSet::new));
                return "no schedulable node has GPU model " + String.join(" or ", job.gpuModels()) + " (the cluster has " + String.join(", ", models) + ")";
            }
            candidates = withModel;
        }
        if (!job.nodeSelector().isEmpty()) {
            List<Node> matching = candidates.stream()
                    .filter(n -> job.nodeSelector().entrySet().stream().allMatch(e -> e.getValue().equals(n.labels().get(e.getKey())))).toList();
            if (matching.isEmpty()) {
                return "nodeSelector " + job.nodeSelector() + " matches none of the " + candidates.size() + " schedulable nodes" + modelScope(job);
            }
            candidates = matching;
        }
        List<Node> tolerated = candidates.stream().filter(n -> untolerated(job, n) == null).toList();
        if (tolerated.isEmpty()) {
            Set<String> keys = new LinkedHashSet<>();
            candidates.forEach(n -> keys.add(untolerated(job, n)));
            return "every one of the " + candidates.size() + " matching nodes has a NoSchedule taint the job does not tolerate ("
                    + String.join(", ", keys) + "): add a toleration";
        }
        return "GPU sharing (gpuMilli) needs a node with gpuSharing: none of the " + tolerated.size() + " matching nodes allows it";
    }

    private static String untolerated(PendingJob job, Node n) {
        for (Taint t : n.taints()) {
            if (t.blocksScheduling() && job.tolerations().stream().noneMatch(x -> x.tolerates(t))) {
                return t.value() == null ? t.key() : t.key() + "=" + t.value();
            }
        }
        return null;
    }

    private String modelScope(PendingJob job) {
        return job.gpuModels().isEmpty() ? "" : " with " + String.join(" or ", job.gpuModels());
    }

    /** A single pod bigger than any eligible node (GPUs in one group, CPU, memory) can never fit. */
    private String podShape(PendingJob job, Replica r, int[] eligible) {
        // the largest group, CPU and memory of an eligible node set: computed once per set and topology
        long[] most = largest.computeIfAbsent(List.of(System.identityHashCode(eligible), r.topology()), k -> {
            long[] m = new long[3];
            for (int i : eligible) {
                Node n = st.node(i);
                for (long g : st.groupMasks(i, r.topology())) {
                    m[0] = Math.max(m[0], Long.bitCount(g));
                }
                m[1] = Math.max(m[1], n.cpuMillis());
                m[2] = Math.max(m[2], n.memoryMiB());
            }
            return m;
        });
        int bestGroup = (int) most[0];
        long bestCpu = most[1];
        long bestMem = most[2];
        if (!r.sharing() && !r.mig() && r.gpus() > bestGroup) {
            String where = switch (r.topology()) {
                case NVLINK -> " in one NVLink island; the largest island";
                case NUMA -> " in one NUMA node; the largest NUMA node";
                case ANY -> " on one node; the largest node";
            };
            return "each pod (" + r.task() + ") needs " + r.gpus() + " GPUs" + where + " among the " + eligible.length
                    + " eligible nodes" + modelScope(job) + " has " + bestGroup + ": use more, smaller pods";
        }
        if (r.cpuMillis() > bestCpu) {
            return "pod " + r.task() + " needs " + r.cpuMillis() + "m CPU; the largest eligible node has " + bestCpu + "m";
        }
        if (r.memoryMiB() > bestMem) {
            return "pod " + r.task() + " needs " + r.memoryMiB() + " MiB memory; the largest eligible node has " + bestMem + " MiB";
        }
        return null;
    }

    private String gangSize(PendingJob job, List<Replica> reps, long minMilli) {
        NetworkLevel level = job.network().required();
        List<int[]> domains = packer.domains(job, level);
        long total = reps.stream().mapToLong(Replica::gpuMilli).sum();
        // the state does not change while explaining: the best domain of a domain list is computed once
        int[] bestDomain = bestDomains.computeIfAbsent(domains, ds -> {
            long most = -1;
            int[] best = null;
            for (int[] d : ds) {
                long free = 0;
                for (int i : d) {
                    free += st.freeMilli(i);
                }
                if (free > most) {
                    most = free;
                    best = d;
                }
            }
            return best;
        });
        long bestFree = 0;
        if (bestDomain != null) {
            for (int i : bestDomain) {
                bestFree += st.freeMilli(i);
            }
        }
        int[] domainForReclaim = bestDomain;
        long reclaim = reclaims.computeIfAbsent(List.of(System.identityHashCode(domainForReclaim), job.queue(), job.priority()),
                k -> reclaimable(job, domainForReclaim));
        String model = job.gpuModels().isEmpty() ? " " : " x " + String.join("|", job.gpuModels()) + " ";
        String need = job.minAvailable() < reps.size()
                ? "gang needs at least " + gpus(minMilli) + model + gpuWord(minMilli) + " (" + job.minAvailable() + " of " + reps.size() + " pods)"
                : "gang needs " + gpus(total) + model + gpuWord(total);
        String scope = scope(level, job.requireInfiniBand());
        String have = (level == NetworkLevel.ANY && !job.requireInfiniBand() ? "the eligible nodes have " : "the best " + (level == NetworkLevel.ANY ? "InfiniBand fabric" : domainName(level)) + " has ")
                + gpus(bestFree) + " free"
                + (reclaim > 0 ? " (" + gpus(bestFree + reclaim) + " free or reclaimable)" : "");
        if (bestFree >= minMilli) {
            Replica r = reps.getFirst();
            String topo = r.topology() == GpuTopology.ANY ? "" : " in one " + (r.topology() == GpuTopology.NVLINK ? "NVLink island" : "NUMA node");
            return need + scope + "; " + have + ", but no node set fits its pods (" + r.task() + ": " + describe(r) + topo
                    + "): free GPUs are fragmented or CPU/memory is short";
        }
        return need + scope + "; " + have;
    }

    private static String describe(Replica r) {
        String g = r.mig() ? r.gpus() + " MIG devices " + r.migProfile() : r.sharing() ? r.milli() + " milli-GPU" : r.gpus() + " GPUs";
        return g + ", " + r.cpuMillis() + "m CPU, " + r.memoryMiB() + " MiB";
    }

    /** Preemptible running work a job of this priority could reclaim inside the domain. */
    private long reclaimable(PendingJob job, int[] domain) {
        if (domain == null) {
            return 0;
        }
        if (runningByNode == null) {
            runningByNode = new HashMap<>();
            for (RunningJob r : sc.running()) {
                if (!r.preemptible()) {
                    continue;
                }
                for (RunningTask t : r.tasks()) {
                    runningByNode.computeIfAbsent(st.indexOf(t.node()), k -> new ArrayList<>()).add(new TaskOnNode(r, t.gpuMilliTotal()));
                }
            }
        }
        long sum = 0;
        for (int i : domain) {
            for (TaskOnNode t : runningByNode.getOrDefault(i, List.of())) {
                RunningJob r = t.job();
                boolean lower = r.queue().equals(job.queue()) && r.priority() < job.priority();
                Queue q = ledger.queue(r.queue());
                boolean borrowed = !r.queue().equals(job.queue()) && q.reclaimable() && ledger.before(r.queue()) > q.guaranteeGpus() * 1000L;
                if (lower || borrowed) {
                    sum += t.milli();
                }
            }
        }
        return sum;
    }

    private record TaskOnNode(RunningJob job, long milli) {
    }

    static String scope(NetworkLevel level, boolean ib) {
        String s = switch (level) {
            case NODE -> " on one node";
            case LEAF -> " under one leaf";
            case SPINE -> " under one spine";
            case ZONE -> " in one zone";
            case ANY -> "";
        };
        return ib ? s + " on one InfiniBand fabric" : s;
    }

    static String domainName(NetworkLevel level) {
        return switch (level) {
            case NODE -> "node";
            case LEAF -> "leaf";
            case SPINE -> "spine";
            case ZONE -> "zone";
            case ANY -> "node set";
        };
    }

    private static String gpuWord(long milli) {
        return milli == 1000 ? "GPU" : "GPUs";
    }

    static String gpus(long milli) {
        return milli % 1000 == 0 ? Long.toString(milli / 1000) : String.format(java.util.Locale.ROOT, "%.3f", milli / 1000.0);
    }

}
