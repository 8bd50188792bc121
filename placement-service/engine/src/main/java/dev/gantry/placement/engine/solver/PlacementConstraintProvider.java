package dev.gantry.placement.engine.solver;

import static ai.timefold.solver.core.api.score.stream.ConstraintCollectors.sum;

import ai.timefold.solver.core.api.score.HardMediumSoftScore;
import ai.timefold.solver.core.api.score.stream.Constraint;
import ai.timefold.solver.core.api.score.stream.ConstraintFactory;
import ai.timefold.solver.core.api.score.stream.ConstraintProvider;
import ai.timefold.solver.core.api.score.stream.Joiners;
import dev.gantry.placement.engine.solver.justifications.CpuCapacityJustification;
import dev.gantry.placement.engine.solver.justifications.ExpectedFragmentationJustification;
import dev.gantry.placement.engine.solver.justifications.FairShareJustification;
import dev.gantry.placement.engine.solver.justifications.FragmentationJustification;
import dev.gantry.placement.engine.solver.justifications.GpuConflictJustification;
import dev.gantry.placement.engine.solver.justifications.GpuSpeedJustification;
import dev.gantry.placement.engine.solver.justifications.GuaranteeShortfallJustification;
import dev.gantry.placement.engine.solver.justifications.MemoryCapacityJustification;
import dev.gantry.placement.engine.solver.justifications.MigrationCostJustification;
import dev.gantry.placement.engine.solver.justifications.PreemptedGpusJustification;
import dev.gantry.placement.engine.solver.justifications.PreemptionDisruptionJustification;
import dev.gantry.placement.engine.solver.justifications.PreferredNetworkJustification;
import dev.gantry.placement.engine.solver.justifications.ProtectedPreemptionJustification;
import dev.gantry.placement.engine.solver.justifications.QueueCapabilityJustification;
import dev.gantry.placement.engine.solver.justifications.ReclaimBelowGuaranteeJustification;
import dev.gantry.placement.engine.solver.justifications.UnjustifiedPreemptionJustification;
import dev.gantry.placement.engine.solver.justifications.UnplacedGpusJustification;
import java.util.List;
import java.util.Set;

/**
 * The placement score. Options already honour every per-gang rule (model, selector, taints,
 * islands/NUMA, network, InfiniBand, gang size), so constraints cover only what gangs share.
 * Hard: FORMAT.md's validity rules. Medium: netPriorityGpus as check_plan.py counts it (with a
 * little aging). Soft: disruption, topology, fragmentation, fairness. GPU amounts are milli-GPUs.
 */
public class PlacementConstraintProvider implements ConstraintProvider {
    // Hard
    public static final String GPU_CONFLICT = "GPU used twice";
    public static final String CPU_CAPACITY = "CPU over allocatable";
    public static final String MEMORY_CAPACITY = "Memory over allocatable";
    public static final String QUEUE_CAPABILITY = "Queue capability";
    public static final String PROTECTED_JOB_PREEMPTED = "Non-preemptible job preempted";
    public static final String UNJUSTIFIED_PREEMPTION = "Unjustified preemption";
    public static final String RECLAIM_BELOW_GUARANTEE = "Reclaim below guarantee";
    // Medium
    public static final String UNPLACED_GPUS = "Unplaced pending GPUs";
    public static final String PREEMPTED_GPUS = "Preempted GPUs";
    public static final String GUARANTEE_SHORTFALL = "Guarantee shortfall";
    // Soft
    public static final String PREEMPTION_DISRUPTION = "Preemption disruption";
    public static final String MIGRATION_COST = "Migration cost";
    public static final String PREFERRED_NETWORK = "Preferred network missed";
    public static final String FRAGMENTATION = "Fragmentation";
    public static final String EXPECTED_FRAGMENTATION = "Expected fragmentation";
    public static final String FAIR_SHARE = "Fair share deviation";
    public static final String GPU_SPEED = "Slower GPUs";

    /** Hard rules are validity, not taste: a weight override of one of them is rejected. */
    public static final Set<String> HARD_CONSTRAINTS = Set.of(GPU_CONFLICT, CPU_CAPACITY, MEMORY_CAPACITY, QUEUE_CAPABILITY,
            PROTECTED_JOB_PREEMPTED, UNJUSTIFIED_PREEMPTION, RECLAIM_BELOW_GUARANTEE);
    public static final List<String> MEDIUM_CONSTRAINTS = List.of(UNPLACED_GPUS, PREEMPTED_GPUS, GUARANTEE_SHORTFALL);
    public static final List<String> SOFT_CONSTRAINTS = List.of(PREEMPTION_DISRUPTION, MIGRATION_COST, PREFERRED_NETWORK, FRAGMENTATION,
            EXPECTED_FRAGMENTATION, FAIR_SHARE, GPU_SPEED);

    /** Soft units: one stranded GPU costs 100. */
    static final long STRANDED_GPU = 100;
    static final long WHOLE_NODE_LOST = 200;
    static final long PREEMPTION_BASE = 1000;
    static final long PREEMPTION_PER_GPU = 50;
    static final long PREFERRED_MISS_BASE = 300;
    static final long PREFERRED_MISS_PER_NODE = 50;
    static final long OVER_SHARE_PER_GPU = 20;
    /**
     * One GPU one V100-unit slower than the fastest model (see the engine's GpuSpeeds): a fifth
     * of a stranded GPU, so speed only decides among placements of equal fragmentation.
     */
    static final long SLOWER_GPU = 20;
    /** Ten times a stranded GPU: what the workload can still use outranks GPUs merely left over. */
    static final long EXPECTED_FRAGMENTED_GPU = 1000;

    @Override
    public Constraint[] defineConstraints(ConstraintFactory f) {
        return new Constraint[] {
            // Hard
            gpuConflict(f),
            cpuCapacity(f),
            memoryCapacity(f),
            queueCapability(f),
            protectedJobPreempted(f),
            unjustifiedPreemption(f),
            reclaimBelowGuarantee(f),
            // Medium
            unplacedGpus(f),
            preemptedGpus(f),
            guaranteeShortfall(f),
            // Soft
            preemptionDisruption(f),
            migrationCost(f),
            preferredNetworkMissed(f),
            fragmentation(f),
            expectedFragmentation(f),
            fairShare(f),
            gpuSpeed(f),
        };
    }

    /** Two options on one GPU, or sharing tasks beyond 1000 milli (a whole GPU counts 1000). */
    Constraint gpuConflict(ConstraintFactory f) {
        return f.forEach(GangAssignment.class)
                .flattenLast(a -> a.getOption().slots())
                .groupBy(SlotUse::slot, sum(SlotUse::milli))
                .filter((slot, milli) -> slot.pinnedMilli() + milli > 1000)
                .penalize(HardMediumSoftScore.ONE_HARD, (slot, milli) -> slot.pinnedMilli() + milli - 1000)
                .justifyWith((slot, milli, score) -> new GpuConflictJustification(slot.nodeName(), slot.gpu(), slot.pinnedMilli() + milli,
                        "GPU " + slot.nodeName() + "/" + slot.gpu() + " asked for " + (slot.pinnedMilli() + milli) + " milli"))
                .asConstraint(GPU_CONFLICT);
    }

    Constraint cpuCapacity(ConstraintFactory f) {
        return f.forEach(GangAssignment.class)
                .flattenLast(a -> a.getOption().loads())
                .groupBy(NodeLoad::node, sum(NodeLoad::cpuMillis))
                .filter((node, cpu) -> cpu > node.cpuMillis())
                .penalize(HardMediumSoftScore.ONE_HARD, (node, cpu) -> Math.max(1, (cpu - node.cpuMillis()) / 1000))
                .justifyWith((node, cpu, score) -> new CpuCapacityJustification(node.name(), cpu, node.cpuMillis(),
                        "node " + node.name() + " asked for " + cpu + "m CPU, " + node.cpuMillis() + "m left"))
                .asConstraint(CPU_CAPACITY);
    }

    Constraint memoryCapacity(ConstraintFactory f) {
        return f.forEach(GangAssignment.class)
                .flattenLast(a -> a.getOption().loads())
                .groupBy(NodeLoad::node, sum(NodeLoad::memoryMiB))
                .filter((node, mem) -> mem > node.memoryMiB())
                .penalize(HardMediumSoftScore.ONE_HARD, (node, mem) -> Math.max(1, (mem - node.memoryMiB()) / 1024))
                .justifyWith((node, mem, score) -> new MemoryCapacityJustification(node.name(), mem, node.memoryMiB(),
                        "node " + node.name() + " asked for " + mem + " MiB, " + node.memoryMiB() + " MiB left"))
                .asConstraint(MEMORY_CAPACITY);
    }

    /** Children count toward parents: each assignment adds its GPUs to its queue and every ancestor. */
    Constraint queueCapability(ConstraintFactory f) {
        return f.forEach(GangAssignment.class)
                .flatten(GangAssignment::queueChain)
                .groupBy((a, q) -> q, sum((a, q) -> a.placedMilli()))
                .filter((q, milli) -> q.subtreePinnedMilli() + milli > q.capabilityLimit())
                .penalize(HardMediumSoftScore.ONE_HARD, (q, milli) -> Math.max(1, (q.subtreePinnedMilli() + milli - q.capabilityLimit()) / 1000))
                .justifyWith((q, milli, score) -> new QueueCapabilityJustification(q.name(), q.subtreePinnedMilli() + milli, q.capabilityLimit(),
                        "queue " + q.name() + " would hold " + (q.subtreePinnedMilli() + milli) / 1000.0 + " GPUs, limit " + q.capabilityLimit() / 1000.0))
                .asConstraint(QUEUE_CAPABILITY);
    }

    Constraint protectedJobPreempted(ConstraintFactory f) {
        return f.forEachIncludingUnassigned(GangAssignment.class)
                .filter(a -> a.preempted() && !a.preemptible())
                .penalize(HardMediumSoftScore.ONE_HARD)
                .justifyWith((a, score) -> new ProtectedPreemptionJustification(a.getJob(), a.getJob() + " is not preemptible"))
                .asConstraint(PROTECTED_JOB_PREEMPTED);
    }

    /**
     * A victim needs a placed job of its own queue with a higher priority, or (reclaim) its queue
     * borrowed GPUs and some job of another queue is placed (FORMAT.md rule 7).
     */
    Constraint unjustifiedPreemption(ConstraintFactory f) {
        // victims no reclaim can justify (their queue holds no borrowed GPUs): a higher-priority job of their queue must be placed
        var noReclaim = unjustifiedByPriority(f, false);
        // the others also stand when no job of another queue is placed: no queue with a placed job sorts before
        // theirs, nor after it (indexed comparisons against the few queues with placed jobs; a "different queue"
        // filter cannot be indexed, and at 5,000 nodes every victim and every placed gang paid a scan for it)
        var queuesWithPlacedJobs = f.forEach(GangAssignment.class).filter(GangAssignment::pending).groupBy(GangAssignment::queue);
        var noOtherQueuePlaced = unjustifiedByPriority(f, true)
                .ifNotExists(queuesWithPlacedJobs, Joiners.greaterThan(GangAssignment::queue, placedQueue -> placedQueue))
                .ifNotExists(queuesWithPlacedJobs, Joiners.lessThan(GangAssignment::queue, placedQueue -> placedQueue));
        return noReclaim.concat(noOtherQueuePlaced)
                .penalize(HardMediumSoftScore.ONE_HARD)
                .justifyWith((v, score) -> new UnjustifiedPreemptionJustification(v.getJob(), v.queue(), v.priority(),
                        v.getJob() + " evicted with no higher-priority job of queue " + v.queue() + " placed and no reclaim"))
                .asConstraint(UNJUSTIFIED_PREEMPTION);
    }

    /** Preempted running jobs (of queues reclaim may take from, or not) with no placed pending job of their own queue and a higher priority. */
    private static ai.timefold.solver.core.api.score.stream.uni.UniConstraintStream<GangAssignment> unjustifiedByPriority(ConstraintFactory f,
            boolean reclaimEligible) {
        return f.forEachIncludingUnassigned(GangAssignment.class)
                .filter(v -> v.preempted() && v.queueFacts().reclaimEligible() == reclaimEligible)
                // indexed joiners: only placed pending gangs of the victim's queue with a higher priority are looked at
                .ifNotExists(f.forEach(GangAssignment.class).filter(GangAssignment::pending),
                        Joiners.equal(GangAssignment::queue),
                        Joiners.lessThan(GangAssignment::priority));
    }

    /**
     * Reclaim never takes a queue under its guarantee. Stricter than the checker (it also counts
     * victims justified by priority) so the rule stays a simple per-queue sum.
     */
    Constraint reclaimBelowGuarantee(ConstraintFactory f) {
        return f.forEachIncludingUnassigned(GangAssignment.class)
                .groupBy(GangAssignment::queueFacts, sum(GangAssignment::placedMilli), sum(a -> a.preempted() ? 1 : 0))
                .filter((q, milli, victims) -> victims > 0 && q.pinnedMilli() + milli < q.reclaimFloor())
                .penalize(HardMediumSoftScore.ONE_HARD, (q, milli, victims) -> Math.max(1, (q.reclaimFloor() - q.pinnedMilli() - milli) / 1000))
                .justifyWith((q, milli, victims, score) -> new ReclaimBelowGuaranteeJustification(q.name(), q.pinnedMilli() + milli, q.reclaimFloor(),
                        "queue " + q.name() + " would keep " + (q.pinnedMilli() + milli) / 1000.0 + " GPUs, under its guarantee " + q.reclaimFloor() / 1000.0))
                .asConstraint(RECLAIM_BELOW_GUARANTEE);
    }

    /** The main objective: every pending GPU left out costs its priority weight (netPriorityGpus). */
    Constraint unplacedGpus(ConstraintFactory f) {
        return f.forEachIncludingUnassigned(GangAssignment.class)
                .filter(a -> a.missingMilli() > 0)
                .penalize(HardMediumSoftScore.ONE_MEDIUM, a -> a.missingMilli() * a.gpuWeight() / 1000)
                .justifyWith((a, score) -> new UnplacedGpusJustification(a.getJob(), a.missingMilli(), a.priority(),
                        a.getJob() + " leaves " + a.missingMilli() / 1000.0 + " GPUs unplaced"))
                .asConstraint(UNPLACED_GPUS);
    }

    Constraint preemptedGpus(ConstraintFactory f) {
        return f.forEachIncludingUnassigned(GangAssignment.class)
                .filter(GangAssignment::preempted)
                .penalize(HardMediumSoftScore.ONE_MEDIUM, a -> a.gpuMilli() * a.gpuWeight() / 1000)
                .justifyWith((a, score) -> new PreemptedGpusJustification(a.getJob(), a.gpuMilli(), a.priority(),
                        a.getJob() + " (priority " + a.priority() + ") loses " + a.gpuMilli() / 1000.0 + " GPUs"))
                .asConstraint(PREEMPTED_GPUS);
    }

    /**
     * Guarantees hold across queues whatever the jobs' priorities: a queue left holding less than
     * its guarantee (or than all it runs and waits for, when that is less) costs its shortfall at a
     * weight above every job's priority weight, so placing its job by reclaiming GPUs another queue
     * borrows beats keeping that queue's higher-priority jobs. Inside a queue, priority decides.
     */
    Constraint guaranteeShortfall(ConstraintFactory f) {
        return f.forEachIncludingUnassigned(GangAssignment.class)
                .filter(a -> a.queueFacts().guaranteeNeed() > 0)
                .groupBy(GangAssignment::queueFacts, sum(GangAssignment::placedMilli))
                .filter((q, milli) -> q.pinnedMilli() + milli < q.guaranteeNeed())
                .penalize(HardMediumSoftScore.ONE_MEDIUM, (q, milli) -> (q.guaranteeNeed() - q.pinnedMilli() - milli) * q.guaranteeWeight() / 1000)
                .justifyWith((q, milli, score) -> new GuaranteeShortfallJustification(q.name(), q.pinnedMilli() + milli, q.guaranteeNeed(),
                        "queue " + q.name() + " would hold " + (q.pinnedMilli() + milli) / 1000.0 + " GPUs, under the "
                                + q.guaranteeNeed() / 1000.0 + " of its guarantee it can use"))
                .asConstraint(GUARANTEE_SHORTFALL);
    }

    /** Fewer, smaller victims; a victim that cannot checkpoint loses its work since start (capped at a day). */
    Constraint preemptionDisruption(ConstraintFactory f) {
        return f.forEachIncludingUnassigned(GangAssignment.class)
                .filter(GangAssignment::preempted)
                .penalize(HardMediumSoftScore.ONE_SOFT, a -> PREEMPTION_BASE + PREEMPTION_PER_GPU * a.gpuMilli() / 1000
                        + (a.checkpointable() ? 0 : a.gpuMilli() / 1000 * Math.min(a.runningSeconds(), 86_400) / 60))
                .justifyWith((a, score) -> new PreemptionDisruptionJustification(a.getJob(), a.gpuMilli(), a.checkpointable(),
                        "evicting " + a.getJob() + (a.checkpointable() ? "" : " loses its work since start")))
                .asConstraint(PREEMPTION_DISRUPTION);
    }

    /** Nonvolatile replanning: a move must pay for its restart through placement or packing (its cost: the profile's {@link MoveCost}). */
    Constraint migrationCost(ConstraintFactory f) {
        return f.forEach(GangAssignment.class)
                .filter(GangAssignment::migrated)
                .penalize(HardMediumSoftScore.ONE_SOFT, GangAssignment::moveCost)
                .justifyWith((a, score) -> new MigrationCostJustification(a.getJob(), a.getOption().podCount(), a.gpuMilli(),
                        "moving " + a.getJob() + " restarts " + a.getOption().podCount() + " tasks"))
                .asConstraint(MIGRATION_COST);
    }

    Constraint preferredNetworkMissed(ConstraintFactory f) {
        return f.forEach(GangAssignment.class)
                .filter(a -> a.getOption().preferredMissed())
                .penalize(HardMediumSoftScore.ONE_SOFT, a -> PREFERRED_MISS_BASE + PREFERRED_MISS_PER_NODE * a.getOption().nodeCount())
                .justifyWith((a, score) -> new PreferredNetworkJustification(a.getJob(), a.getOption().nodeCount(),
                        a.getJob() + " spans " + a.getOption().nodeCount() + " nodes outside its preferred domain"))
                .asConstraint(PREFERRED_NETWORK);
    }

    /**
     * Stranded GPUs (free on a partly used node) and whole free nodes lost, on the nodes the
     * options touch; untouched nodes do not change with the plan.
     */
    Constraint fragmentation(ConstraintFactory f) {
        return f.forEach(GangAssignment.class)
                .flattenLast(a -> a.getOption().loads())
                .groupBy(NodeLoad::node, sum(NodeLoad::gpuMilli))
                .filter((node, milli) -> milli > 0 && node.totalGpuMilli() > 0)
                .penalize(HardMediumSoftScore.ONE_SOFT, (node, milli) -> Math.max(0, node.gpuMilli() - milli) * STRANDED_GPU / 1000
                        + (node.pinnedBusy() ? 0 : WHOLE_NODE_LOST))
                .justifyWith((node, milli, score) -> new FragmentationJustification(node.name(), Math.max(0, node.gpuMilli() - milli), !node.pinnedBusy(),
                        "node " + node.name() + " keeps " + Math.max(0, node.gpuMilli() - milli) / 1000.0 + " GPUs stranded"))
                .asConstraint(FRAGMENTATION);
    }

    /**
     * The free GPUs the window's workload could no longer use (see the engine's
     * FragmentationGauge): an option that fills room nobody else could use earns; one that breaks
     * a whole node a big pod needs pays. Each option is measured alone on the pinned cluster.
     */
    Constraint expectedFragmentation(ConstraintFactory f) {
        return f.forEach(GangAssignment.class)
                .filter(a -> a.getOption().fragmentationMilli() != 0)
                .impact(HardMediumSoftScore.ONE_SOFT, a -> -a.getOption().fragmentationMilli() * EXPECTED_FRAGMENTED_GPU / 1000)
                .justifyWith((a, score) -> new ExpectedFragmentationJustification(a.getJob(), a.getOption().fragmentationMilli(),
                        a.getJob() + (a.getOption().fragmentationMilli() > 0 ? " leaves " : " frees ")
                                + Math.abs(a.getOption().fragmentationMilli()) / 1000.0 + " GPUs the workload can no longer use"))
                .asConstraint(EXPECTED_FRAGMENTATION);
    }

    /** A queue above its deserved share pays a little per GPU: ties go to the under-served queue. */
    Constraint fairShare(ConstraintFactory f) {
        return f.forEach(GangAssignment.class)
                .groupBy(GangAssignment::queueFacts, sum(GangAssignment::placedMilli))
                .filter((q, milli) -> q.pinnedMilli() + milli > q.deservedMilli())
                .penalize(HardMediumSoftScore.ONE_SOFT, (q, milli) -> (q.pinnedMilli() + milli - q.deservedMilli()) * OVER_SHARE_PER_GPU / 1000)
                .justifyWith((q, milli, score) -> new FairShareJustification(q.name(), q.pinnedMilli() + milli, q.deservedMilli(),
                        "queue " + q.name() + " holds " + (q.pinnedMilli() + milli) / 1000.0 + " GPUs, deserves " + q.deservedMilli() / 1000.0))
                .asConstraint(FAIR_SHARE);
    }

    /** A job on slower GPUs than the fastest model pays a little: among equal placements, the faster GPUs. */
    Constraint gpuSpeed(ConstraintFactory f) {
        return f.forEach(GangAssignment.class)
                .filter(a -> a.getOption() != null && a.getOption().slownessMilli() > 0)
                .penalize(HardMediumSoftScore.ONE_SOFT, a -> a.getOption().slownessMilli() * SLOWER_GPU / 1000)
                .justifyWith((a, score) -> new GpuSpeedJustification(a.getJob(), a.getOption().slownessMilli(),
                        a.getJob() + " runs on GPUs slower than the fastest model"))
                .asConstraint(GPU_SPEED);
    }
}
