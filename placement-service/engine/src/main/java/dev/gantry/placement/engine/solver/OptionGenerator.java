package dev.gantry.placement.engine.solver;

import dev.gantry.placement.engine.domain.Network;
import dev.gantry.placement.engine.domain.Node;
import dev.gantry.placement.engine.domain.PendingJob;
import dev.gantry.placement.engine.domain.Queue;
import dev.gantry.placement.engine.domain.RunningJob;
import dev.gantry.placement.engine.domain.RunningTask;
import dev.gantry.placement.engine.domain.Scenario;
import dev.gantry.placement.engine.packing.Aging;
import dev.gantry.placement.engine.packing.ClusterState;
import dev.gantry.placement.engine.packing.FairShares;
import dev.gantry.placement.engine.packing.GangPacker;
import dev.gantry.placement.engine.packing.MoveShape;
import dev.gantry.placement.engine.packing.GreedyPass;
import dev.gantry.placement.engine.packing.QueueLedger;
import dev.gantry.placement.engine.packing.Replica;
import dev.gantry.placement.engine.validation.PlanValidator;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Builds the Timefold problem: entities and their placement options.
 * <ul>
 *   <li>Pending gangs: options on greedy's final state (everything running kept, greedy's
 *       placements in: a single change move places a job without conflict) and on a victim
 *       state per (queue, priority) (work the gang may justifiably and profitably evict, and
 *       migratable work, lifted: options that the evict-and-place move makes room for).</li>
 *   <li>Running jobs become entities only when some pending option touches their GPUs: other
 *       running work can be neither a useful victim nor make useful room, so it joins the
 *       pinned facts. That keeps the model (and the solver's start-up) proportional to the
 *       contested part of the cluster.</li>
 * </ul>
 * Each state gives the {@code k} best-fit candidates ({@link GangPacker#candidates}); GPU indices
 * are chosen on that state (lowest free in the tightest island/NUMA group, preferring GPUs free
 * in greedy's state), so options rarely collide by accident.
 */
public final class OptionGenerator {
    /** Candidates per state for a pending gang, and for a migration. */
    private final int pendingPerState;
    private final int migrationsPerState;
    /** What a move of a running job costs in the score (the solver profile's). */
    private final MoveCost moveCost;
    /** Reclaim works toward fair shares, not only guarantees (the solver profile's). */
    private final boolean towardFairShare;
    private final Set<String> fairShareTrees;
    /**
     * Queue -> what reclaim restores and protects (milli-GPUs): the guarantee; with reclaim toward
     * the fair share, the larger of the guarantee and the fair share ({@link FairShares}).
     */
    private final Map<String, Long> entitled = new HashMap<>();

    private final Scenario sc;
    private final GreedyPass.Result greedy;
    private final GangPacker packer;
    private final ClusterState emptyState;
    private ClusterState fixedState;
    private NodeCapacity[] capacities;
    private final GpuSlot[][] slots;
    private final Map<List<Object>, ClusterState> victimStates = new HashMap<>();
    /**
     * The cluster as if the migratable jobs made into entities so far had taken their first move:
     * gives each next one a move clear of theirs, so several small jobs can empty a node together
     * (on greedy's state alone they all get the same best-fit GPUs, and only one of them can move).
     */
    private ClusterState consolidated;
    /** Running jobs by the GPU they hold (node index shifted by 8, plus the GPU), built on first use. */
    private Map<Long, List<Integer>> holders;
    /** The scenario's nodes by name, built on first use (a move's shape looks up the nodes a job runs on). */
    private Map<String, Node> nodesByName;
    private int nextOptionId;

    public OptionGenerator(Scenario sc, GreedyPass.Result greedy, GangPacker packer, int pendingPerState, int migrationsPerState) {
        this(sc, greedy, packer, pendingPerState, migrationsPerState, MoveCost.DEFAULT);
    }

    public OptionGenerator(Scenario sc, GreedyPass.Result greedy, GangPacker packer, int pendingPerState, int migrationsPerState,
            MoveCost moveCost) {
        this(sc, greedy, packer, pendingPerState, migrationsPerState, moveCost, false, Set.of());
    }

    /**
     * @param towardFairShare a queue under its fair share reclaims from queues above theirs, whatever the priorities
     * @param fairShareTrees  the root queues whose trees do so (empty: every tree)
     */
    public OptionGenerator(Scenario sc, GreedyPass.Result greedy, GangPacker packer, int pendingPerState, int migrationsPerState,
            MoveCost moveCost, boolean towardFairShare, Set<String> fairShareTrees) {
        this.moveCost = moveCost;
        this.towardFairShare = towardFairShare;
        this.fairShareTrees = fairShareTrees;
        Map<String, Long> fair = towardFairShare ? FairShares.milli(sc, fairShareTrees) : Map.of();
        for (Queue q : sc.queues()) {
            entitled.put(q.name(), Math.max(q.guaranteeGpus() * 1000L, fair.getOrDefault(q.name(), 0L)));
        }
        this.sc = sc;
        this.greedy = greedy;
        this.pendingPerState = pendingPerState;
        this.migrationsPerState = migrationsPerState;
        this.packer = packer;
        packer.shareRankingsAmong(sc.pending().size());
        this.emptyState = new ClusterState(sc);
        this.slots = new GpuSlot[sc.nodes().size()][];
    }

    public PlacementModel build(ai.timefold.solver.core.api.domain.solution.ConstraintWeightOverrides<ai.timefold.solver.core.api.score.HardMediumSoftScore> overrides) {
        // pass 1: where could each pending gang go?
        Map<String, List<GangPacker.GangFit>> pendingFits = new LinkedHashMap<>();
        // per node, GPUs and (second row) MIG devices some option takes
        long[][] touched = new long[2][sc.nodes().size()];
        int rotation = 0;
        for (PendingJob p : sc.pending()) {
            List<GangPacker.GangFit> fits = pendingFits(p, rotation++);
            pendingFits.put(p.name(), fits);
            for (GangPacker.GangFit fit : fits) {
                for (GangPacker.Assigned a : fit.tasks()) {
                    for (int g : a.gpus()) {
                        mark(touched, a.node(), g);
                    }
                }
            }
        }
        // running work that no option touches joins the pinned facts
        Set<String> fixed = new HashSet<>();
        for (RunningJob r : sc.running()) {
            if (r.pinned() || !touches(r, touched)) {
                fixed.add(r.name());
            }
        }
        fixedState = emptyState.copy();
        sc.running().stream().filter(r -> fixed.contains(r.name())).forEach(fixedState::occupy);
        fixedState.preferFreeIn(greedy.state());
        capacities = new NodeCapacity[sc.nodes().size()];
        for (int i = 0; i < capacities.length; i++) {
            Node n = sc.nodes().get(i);
            long total = 1000L * n.gpus();
            long free = fixedState.freeMilli(i);
            capacities[i] = new NodeCapacity(i, n.name(), fixedState.cpuFree(i), fixedState.memFree(i), free, total, free < total);
        }
        // pass 2: entities and options
        Map<String, QueueFacts> queueFacts = queueFacts(fixed);
        QueueLedger ledger = greedy.ledger();
        List<GangAssignment> entities = new ArrayList<>();
        Map<String, PendingJob> pendingByName = new LinkedHashMap<>();
        Map<String, RunningJob> runningByName = new LinkedHashMap<>();
        for (RunningJob r : sc.running()) {
            if (fixed.contains(r.name())) {
                continue;
            }
            runningByName.put(r.name(), r);
            entities.add(runningEntity(r, queueFacts, ledger));
        }
        for (PendingJob p : sc.pending()) {
            pendingByName.put(p.name(), p);
            entities.add(pendingEntity(p, pendingFits.get(p.name()), queueFacts, ledger));
        }
        return new PlacementModel(sc, new PlacementSolution(entities, overrides), pendingByName, runningByName, nextOptionId, towardFairShare,
                fairShareTrees);
    }

    private static void mark(long[][] touched, int node, int slot) {
        boolean mig = slot >= ClusterState.MIG_SLOT;
        touched[mig ? 1 : 0][node] |= 1L << (mig ? slot - ClusterState.MIG_SLOT : slot);
    }

    private boolean touches(RunningJob r, long[][] touched) {
        for (RunningTask t : r.tasks()) {
            int node = greedy.state().indexOf(t.node());
            for (int g : greedy.state().slots(t)) {
                boolean mig = g >= ClusterState.MIG_SLOT;
                if ((touched[mig ? 1 : 0][node] & (1L << (mig ? g - ClusterState.MIG_SLOT : g))) != 0) {
                    return true;
                }
            }
        }
        return false;
    }

    private List<QueueFacts> chain(String queue, Map<String, QueueFacts> facts, QueueLedger ledger) {
        return ledger.chain(queue).stream().map(facts::get).toList();
    }

    /** Greedy's own placement first, then the best fits on greedy's state and on the victim state. */
    private List<GangPacker.GangFit> pendingFits(PendingJob job, int rotation) {
        List<Replica> reps = Replica.of(job);
        List<GangPacker.GangFit> fits = new ArrayList<>();
        GangPacker.GangFit greedyFit = greedy.fits().get(job.name());
        if (greedyFit != null) {
            fits.add(greedyFit);
        }
        fits.addAll(packer.candidates(greedy.state(), job, reps, pendingPerState, rotation));
        // those that evict the fewest running jobs first, then the cheapest victims (lowest priority, checkpointable,
        // most recently started; best fit among equals): the solver's first pass keeps the first option that
        // improves, and a preemption should disturb as little as it can
        List<GangPacker.GangFit> evicting = new ArrayList<>(packer.candidates(victimState(job), job, reps, pendingPerState, rotation));
        Map<GangPacker.GangFit, long[]> cost = new HashMap<>();
        evicting.forEach(fit -> cost.put(fit, victimCost(fit)));
        evicting.sort(Comparator.comparing(cost::get, Arrays::compare));
        fits.addAll(evicting);
        return fits;
    }

    /**
     * What evicting for the fit costs, to compare lexicographically: how many running jobs, their
     * priority-weighted GPUs, how many cannot checkpoint, and the GPU-seconds they have run (so the
     * most recently started go first).
     */
    private long[] victimCost(GangPacker.GangFit fit) {
        long weighted = 0;
        long noCheckpoint = 0;
        long ran = 0;
        Set<Integer> under = runningJobsUnder(fit);
        for (int j : under) {
            RunningJob r = sc.running().get(j);
            weighted += r.gpuMilli() * (1000L + r.priority()) / 1000;
            noCheckpoint += r.checkpointable() ? 0 : 1;
            ran += r.gpuMilli() / 1000 * Math.max(0, sc.nowSeconds() - r.startedAtSeconds());
        }
        return new long[] {under.size(), weighted, noCheckpoint, ran};
    }

    /** The running jobs (indices) that hold GPUs the fit takes. */
    private Set<Integer> runningJobsUnder(GangPacker.GangFit fit) {
        if (holders == null) {
            holders = new HashMap<>();
            for (int j = 0; j < sc.running().size(); j++) {
                for (RunningTask t : sc.running().get(j).tasks()) {
                    int node = greedy.state().indexOf(t.node());
                    for (int g : greedy.state().slots(t)) {
                        holders.computeIfAbsent(((long) node << 8) | g, k -> new ArrayList<>(1)).add(j);
                    }
                }
            }
        }
        Set<Integer> under = new HashSet<>();
        for (GangPacker.Assigned a : fit.tasks()) {
            for (int g : a.gpus()) {
                under.addAll(holders.getOrDefault(((long) a.node() << 8) | g, List.of()));
            }
        }
        return under;
    }

    private GangAssignment pendingEntity(PendingJob job, List<GangPacker.GangFit> fits, Map<String, QueueFacts> facts, QueueLedger ledger) {
        List<PlacementOption> options = new ArrayList<>();
        Map<String, PlacementOption> seen = new HashMap<>();
        PlacementOption seed = null;
        GangPacker.GangFit greedyFit = greedy.fits().get(job.name());
        boolean fabricWish = packer.prefersOneFabric(job, Replica.of(job));
        for (GangPacker.GangFit fit : fits) {
            PlacementOption o = add(options, seen, option(PlacementOption.Kind.PLACE, fit.tasks(), job.network(), fabricWish));
            if (fit == greedyFit) {
                seed = o;
            }
        }
        // aging: +1 priority point per 10 minutes waited, at most +100, so old jobs do not starve
        long weight = Math.max(1, 1000L + job.priority() + Aging.points(job, sc.nowSeconds()));
        GangAssignment a = new GangAssignment(job.name(), GangAssignment.Role.PENDING, facts.get(job.queue()), chain(job.queue(), facts, ledger),
                job.priority(), job.gpuMilli(), weight, job.preemptible(), job.checkpointable(), 0, options, null);
        a.setOption(seed);
        return a;
    }

    /**
     * The cluster as a job of this queue and priority could make it: pinned work stays, and so
     * does running work it may not or should not evict (not preemptible, or no justification, or
     * worth as much per GPU); migratable work is lifted (it can go elsewhere). One state per
     * (queue, priority), shared by the jobs that have them.
     */
    private ClusterState victimState(PendingJob job) {
        return victimStates.computeIfAbsent(List.of(job.queue(), job.priority()), k -> {
            QueueLedger ledger = greedy.ledger();
            // under its guarantee (or, with reclaim toward the fair share, under its fair share)
            boolean underGuarantee = ledger.before(job.queue()) < entitled(job.queue());
            ClusterState st = emptyState.copy();
            for (RunningJob r : sc.running()) {
                boolean sameQueueLower = r.queue().equals(job.queue()) && r.priority() < job.priority();
                Queue q = ledger.queue(r.queue());
                // across queues: a job of a queue under its guarantee reclaims whatever the priorities (it restores the guarantee)
                boolean reclaim = !r.queue().equals(job.queue()) && q.reclaimable() && ledger.before(r.queue()) > entitled(r.queue())
                        && (r.priority() < job.priority() || underGuarantee);
                boolean evictable = r.preemptible() && (sameQueueLower || reclaim);
                if (!evictable && !r.migratable()) {
                    st.occupy(r);
                }
            }
            st.preferFreeIn(greedy.state());
            return st;
        });
    }

    private GangAssignment runningEntity(RunningJob job, Map<String, QueueFacts> facts, QueueLedger ledger) {
        List<PlacementOption> options = new ArrayList<>();
        Map<String, PlacementOption> seen = new HashMap<>();
        List<GangPacker.Assigned> now = new ArrayList<>();
        for (RunningTask t : job.tasks()) {
            now.add(new GangPacker.Assigned(Replica.of(t), greedy.state().indexOf(t.node()), greedy.state().slots(t)));
        }
        PlacementOption keep = add(options, seen, option(PlacementOption.Kind.KEEP, now, Network.ANY, false));
        if (job.migratable()) {
            if (nodesByName == null) {
                nodesByName = MoveShape.nodesByName(sc);
            }
            MoveShape move = MoveShape.of(job, nodesByName);
            PendingJob shape = move.shape();
            List<Replica> reps = move.replicas();
            // lift the job out of greedy's state for a moment instead of copying the whole state
            ClusterState state = greedy.state();
            state.release(job);
            try {
                for (GangPacker.GangFit fit : packer.candidates(state, shape, reps, migrationsPerState)) {
                    add(options, seen, option(PlacementOption.Kind.MIGRATE, fit.tasks(), Network.ANY, false));
                }
            } finally {
                state.occupy(job);
            }
            for (GangPacker.GangFit fit : packer.candidates(fixedState, shape, reps, migrationsPerState)) {
                add(options, seen, option(PlacementOption.Kind.MIGRATE, fit.tasks(), Network.ANY, false));
            }
            consolidatedMove(job, shape, reps).ifPresent(fit -> add(options, seen, option(PlacementOption.Kind.MIGRATE, fit.tasks(), Network.ANY, false)));
        }
        long weight = Math.max(1, 1000L + job.priority());
        GangAssignment a = new GangAssignment(job.name(), GangAssignment.Role.RUNNING, facts.get(job.queue()), chain(job.queue(), facts, ledger),
                job.priority(), job.gpuMilli(), weight, job.preemptible(), job.checkpointable(),
                Math.max(0, sc.nowSeconds() - job.startedAtSeconds()), options, keep, moveCost);
        a.setOption(keep);
        return a;
    }

    /**
     * The job's best move on {@link #consolidated}, off the nodes it runs on, which it then takes
     * there (its old GPUs stay taken: the jobs that move do not swap places).
     */
    private java.util.Optional<GangPacker.GangFit> consolidatedMove(RunningJob job, PendingJob shape, List<Replica> reps) {
        if (consolidated == null) {
            consolidated = greedy.state().copy();
        }
        Set<Integer> own = new HashSet<>();
        job.tasks().forEach(t -> own.add(consolidated.indexOf(t.node())));
        for (GangPacker.GangFit fit : packer.candidates(consolidated, shape, reps, migrationsPerState + 2)) {
            if (fit.complete() && fit.tasks().stream().noneMatch(a -> own.contains(a.node()))) {
                fit.tasks().forEach(a -> consolidated.take(a.node(), a.replica(), a.gpus()));
                return java.util.Optional.of(fit);
            }
        }
        return java.util.Optional.empty();
    }

    /** Adds the option unless the same placement is already there; returns the one kept. */
    private static PlacementOption add(List<PlacementOption> options, Map<String, PlacementOption> seen, PlacementOption o) {
        PlacementOption existing = seen.putIfAbsent(o.placementKey(), o);
        if (existing != null) {
            return existing;
        }
        options.add(o);
        return o;
    }

    /**
     * @param fabricWish the gang has no network wish of its own but spans nodes: one InfiniBand
     *                   fabric counts as its preferred domain ({@link GangPacker#prefersOneFabric})
     */
    private PlacementOption option(PlacementOption.Kind kind, List<GangPacker.Assigned> assigned, Network network, boolean fabricWish) {
        List<OptionTask> tasks = new ArrayList<>();
        List<SlotUse> uses = new ArrayList<>();
        Map<Integer, long[]> perNode = new LinkedHashMap<>();
        long milli = 0;
        long slowMilli = 0;
        List<GangPacker.Assigned> sorted = new ArrayList<>(assigned);
        sorted.sort((x, y) -> x.replica().task().compareTo(y.replica().task()));
        for (GangPacker.Assigned a : sorted) {
            Replica r = a.replica();
            int[] gpus = a.gpus().clone();
            Arrays.sort(gpus);
            tasks.add(new OptionTask(r.task(), a.node(), sc.nodes().get(a.node()).name(), gpus, r.milli(), r.cpuMillis(), r.memoryMiB()));
            for (int g : gpus) {
                // a MIG device is a slot of its own, taken whole
                uses.add(new SlotUse(slot(a.node(), g), r.milli() == null ? 1000 : r.milli()));
            }
            long[] load = perNode.computeIfAbsent(a.node(), k -> new long[3]);
            load[0] += r.cpuMillis();
            load[1] += r.memoryMiB();
            // a node's free GPUs (what stranding is measured on) do not include its MIG devices
            load[2] += r.mig() ? 0 : r.gpuMilli();
            milli += r.gpuMilli();
            slowMilli += r.gpuMilli() * packer.slowness(a.node()) / 100;
        }
        List<NodeLoad> loads = new ArrayList<>();
        perNode.forEach((node, l) -> loads.add(new NodeLoad(capacities[node], l[0], l[1], l[2])));
        List<Node> nodes = perNode.keySet().stream().map(sc.nodes()::get).toList();
        boolean asked = network.preferred() != null || fabricWish;
        boolean met = network.preferred() != null ? PlanValidator.networkOk(network.preferred(), nodes) : fabricWish && packer.oneFabric(sorted);
        // a running job staying put changes nothing: measured alone, small jobs sharing a node would
        // each look as if they broke it, and evicting them would look like a gain
        long fragmentation = kind == PlacementOption.Kind.KEEP ? 0 : fragmentation(sorted);
        // staying put costs no speed: the solver must not move a running job for faster GPUs alone
        long slowness = kind == PlacementOption.Kind.KEEP ? 0 : slowMilli;
        return new PlacementOption(nextOptionId++, kind, tasks, uses, loads, milli, nodes.size(), asked, met, fragmentation, slowness);
    }

    /**
     * The option's change in expected fragmentation (with the model-bound demand it displaces), node by node on the pinned state: other
     * options on the same nodes are not seen, so it is the option's own effect, as the packer ranks.
     */
    private long fragmentation(List<GangPacker.Assigned> assigned) {
        if (packer.gauge() == null) {
            return 0;
        }
        Map<Integer, List<GangPacker.Assigned>> byNode = new LinkedHashMap<>();
        assigned.forEach(a -> byNode.computeIfAbsent(a.node(), k -> new ArrayList<>()).add(a));
        double delta = 0;
        for (Map.Entry<Integer, List<GangPacker.Assigned>> e : byNode.entrySet()) {
            delta += packer.gauge().delta(fixedState, e.getKey(), e.getValue().stream().map(GangPacker.Assigned::replica).toList(),
                    e.getValue().stream().map(GangPacker.Assigned::gpus).toList());
            for (GangPacker.Assigned a : e.getValue()) {
                delta += packer.gauge().displaced(fixedState.node(e.getKey()), a.replica()); // as the packer ranks
            }
        }
        return Math.round(delta);
    }

    private GpuSlot slot(int node, int gpu) {
        // one canonical slot object per GPU: the move factory indexes them by identity
        if (slots[node] == null) {
            Node n = sc.nodes().get(node);
            slots[node] = new GpuSlot[n.migDevices().isEmpty() ? n.gpus() : ClusterState.MIG_SLOT + n.migDevices().size()];
        }
        if (slots[node][gpu] == null) {
            int pinned = gpu >= ClusterState.MIG_SLOT ? 0 : fixedState.sharedMilli(node, gpu);
            slots[node][gpu] = new GpuSlot(node, gpu, sc.nodes().get(node).name(), pinned);
        }
        return slots[node][gpu];
    }

    /** Queue facts: before/pinned totals (leaf and subtree), limits, and a weighted fair share of the cluster. */
    private Map<String, QueueFacts> queueFacts(Set<String> fixed) {
        QueueLedger ledger = new QueueLedger(sc);
        Map<String, Long> leafBefore = new HashMap<>();
        Map<String, Long> leafPinned = new HashMap<>();
        Map<String, Long> subtreePinned = new HashMap<>();
        for (RunningJob r : sc.running()) {
            leafBefore.merge(r.queue(), r.gpuMilli(), Long::sum);
            if (fixed.contains(r.name())) {
                leafPinned.merge(r.queue(), r.gpuMilli(), Long::sum);
                for (String q : ledger.chain(r.queue())) {
                    subtreePinned.merge(q, r.gpuMilli(), Long::sum);
                }
            }
        }
        Map<String, Long> deserved = deservedShares(leafBefore);
        // the guarantee term's facts: each queue's own demand, and a weight above every job's priority weight
        Map<String, Long> demand = new HashMap<>(leafBefore);
        sc.pending().forEach(p -> demand.merge(p.queue(), p.gpuMilli(), Long::sum));
        long topWeight = 1000;
        for (RunningJob r : sc.running()) {
            topWeight = Math.max(topWeight, 1000L + r.priority());
        }
        for (PendingJob p : sc.pending()) {
            topWeight = Math.max(topWeight, 1000L + p.priority() + Aging.points(p, sc.nowSeconds()));
        }
        long guaranteeWeight = topWeight + 1000;
        Map<String, QueueFacts> out = new LinkedHashMap<>();
        for (Queue q : sc.queues()) {
            out.put(q.name(), new QueueFacts(q.name(),
                    q.capabilityGpus() == null ? Long.MAX_VALUE / 4 : q.capabilityGpus() * 1000L,
                    leafBefore.getOrDefault(q.name(), 0L),
                    ledger.before(q.name()),
                    subtreePinned.getOrDefault(q.name(), 0L),
                    leafPinned.getOrDefault(q.name(), 0L),
                    entitled(q.name()),
                    q.reclaimable(),
                    deserved.getOrDefault(q.name(), 0L),
                    demand.getOrDefault(q.name(), 0L),
                    guaranteeWeight));
        }
        return out;
    }

    /** Weighted max-min (water-filling) of the cluster's GPUs over each queue's demand (running + pending). */
    private Map<String, Long> deservedShares(Map<String, Long> running) {
        Map<String, Long> demand = new HashMap<>(running);
        sc.pending().forEach(p -> demand.merge(p.queue(), p.gpuMilli(), Long::sum));
        long capacity = sc.nodes().stream().filter(Node::schedulable).mapToLong(n -> 1000L * n.gpus()).sum();
        Map<String, Long> share = new HashMap<>();
        Set<String> open = new HashSet<>();
        for (Queue q : sc.queues()) {
            share.put(q.name(), 0L);
            if (demand.getOrDefault(q.name(), 0L) > 0) {
                open.add(q.name());
            }
        }
        long left = capacity;
        while (left > 0 && !open.isEmpty()) {
            double weights = open.stream().mapToDouble(q -> weight(q)).sum();
            long given = 0;
            for (String q : List.copyOf(open)) {
                long portion = (long) Math.floor(left * weight(q) / weights);
                long want = demand.get(q) - share.get(q);
                long take = Math.min(portion, want);
                share.merge(q, take, Long::sum);
                given += take;
                if (take >= want) {
                    open.remove(q);
                }
            }
            if (given == 0) {
                break;
            }
            left -= given;
        }
        return share;
    }

    private long entitled(String queue) {
        return entitled.getOrDefault(queue, 0L);
    }

    private double weight(String queue) {
        return sc.queues().stream().filter(q -> q.name().equals(queue)).findFirst().map(Queue::weight).orElse(1.0);
    }
}
