package dev.gantry.placement.engine.solver;

import dev.gantry.placement.engine.domain.Migration;
import dev.gantry.placement.engine.domain.PendingJob;
import dev.gantry.placement.engine.domain.Placement;
import dev.gantry.placement.engine.domain.Plan;
import dev.gantry.placement.engine.domain.Preemption;
import dev.gantry.placement.engine.domain.RunningJob;
import dev.gantry.placement.engine.domain.Scenario;
import dev.gantry.placement.engine.domain.TaskPlacement;
import dev.gantry.placement.engine.domain.Unplaced;
import dev.gantry.placement.engine.packing.ClusterState;
import dev.gantry.placement.engine.packing.GangPacker;
import dev.gantry.placement.engine.packing.QueueLedger;
import dev.gantry.placement.engine.packing.ReasonAnalyzer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/** Turns a solved {@link PlacementSolution} into a plan: placements, preemptions with their justification, migrations, reasons. */
public final class PlanExtractor {
    private PlanExtractor() {
    }

    public static Plan toPlan(PlacementModel model, PlacementSolution solution, long solveMillis, Map<String, String> metadata) {
        Scenario sc = model.scenario();
        Map<String, GangAssignment> byJob = new HashMap<>();
        solution.getAssignments().forEach(a -> byJob.put(a.getJob(), a));
        ClusterState st = new ClusterState(sc);
        QueueLedger ledger = new QueueLedger(sc);
        List<Preemption> preemptions = new ArrayList<>();
        List<Migration> migrations = new ArrayList<>();
        List<GangAssignment> placed = new ArrayList<>();
        for (PendingJob p : sc.pending()) {
            GangAssignment a = byJob.get(p.name());
            if (a != null && a.getOption() != null) {
                placed.add(a);
                occupy(st, a.getOption());
                ledger.add(p.queue(), a.getOption().gpuMilli());
            }
        }
        for (RunningJob r : sc.running()) {
            GangAssignment a = byJob.get(r.name());
            if (a == null || a.getOption() == a.current()) {
                st.occupy(r);
            } else if (a.getOption() == null) {
                ledger.add(r.queue(), -r.gpuMilli());
                preemptions.add(new Preemption(r.name(), preemptionReason(a, placed, model.towardFairShare())));
            } else {
                occupy(st, a.getOption());
                migrations.add(new Migration(r.name(), tasks(sc, a.getOption())));
            }
        }
        // who holds each GPU in the solution: names the work in the way of a waiting gang
        Map<GpuSlot, List<GangAssignment>> holders = new java.util.IdentityHashMap<>();
        for (GangAssignment a : solution.getAssignments()) {
            if (a.getOption() != null) {
                for (SlotUse u : a.getOption().slots()) {
                    holders.computeIfAbsent(u.slot(), k -> new ArrayList<>(1)).add(a);
                }
            }
        }
        List<Placement> placements = new ArrayList<>();
        List<Unplaced> unplaced = new ArrayList<>();
        ReasonAnalyzer reasons = new ReasonAnalyzer(sc, st, ledger, new GangPacker(sc.nodes()));
        Set<String> placedNames = new HashSet<>();
        placed.forEach(a -> placedNames.add(a.getJob()));
        for (PendingJob p : sc.pending()) {
            GangAssignment a = byJob.get(p.name());
            if (placedNames.contains(p.name())) {
                placements.add(new Placement(p.name(), tasks(sc, a.getOption())));
            } else {
                ReasonAnalyzer.Reason reason = reasons.analyze(p);
                // who holds the GPUs matters only when capacity, not the queue's capability, is the block
                String suffix = reason.kind() == ReasonAnalyzer.Kind.CAPACITY ? heldBy(a, holders) : "";
                unplaced.add(new Unplaced(p.name(), reason.text() + suffix));
            }
        }
        return new Plan(Plan.FORMAT, sc.name(), placements, preemptions, migrations, unplaced, solveMillis, metadata);
    }

    /** How many holders a reason names at most. */
    private static final int MAX_NAMED = 3;

    /**
     * The work that holds the GPUs of the waiting gang's best option (priority, queue, whether it
     * may be preempted): the plan found keeping it worth more. Empty when the option is blocked
     * by something else (CPU, memory, queue capability) or the gang has no option.
     */
    private static String heldBy(GangAssignment waiting, Map<GpuSlot, List<GangAssignment>> holders) {
        if (waiting == null || waiting.getOptions().isEmpty()) {
            return "";
        }
        PlacementOption best = waiting.getOptions().getFirst();
        java.util.LinkedHashSet<GangAssignment> inWay = new java.util.LinkedHashSet<>();
        for (SlotUse u : best.slots()) {
            for (GangAssignment h : holders.getOrDefault(u.slot(), List.of())) {
                if (h != waiting) {
                    inWay.add(h);
                }
            }
        }
        if (inWay.isEmpty()) {
            return "";
        }
        List<String> named = inWay.stream().limit(MAX_NAMED).map(h -> h.getJob() + " (" + (h.running() ? "running, " : "placed now, ")
                + "priority " + h.priority() + (h.running() && !h.preemptible() ? ", not preemptible" : "")
                + (h.queue().equals(waiting.queue()) ? "" : ", queue " + h.queue()) + ")").toList();
        java.util.Set<String> nodes = new java.util.TreeSet<>();
        best.tasks().forEach(t -> nodes.add(t.nodeName()));
        return "; its best placement (" + String.join(", ", nodes) + ") is taken by " + String.join(", ", named)
                + (inWay.size() > MAX_NAMED ? " and " + (inWay.size() - MAX_NAMED) + " more" : "");
    }

    private static void occupy(ClusterState st, PlacementOption o) {
        for (OptionTask t : o.tasks()) {
            st.take(t.node(), t.gpus(), t.milli(), t.cpuMillis(), t.memoryMiB());
        }
    }

    private static List<TaskPlacement> tasks(Scenario sc, PlacementOption o) {
        return o.tasks().stream()
                .map(t -> new TaskPlacement(t.task(), t.nodeName(), ClusterState.gpuIndices(t.gpus()), t.milli(),
                        ClusterState.migIds(sc.nodes().get(t.node()), t.gpus())))
                .toList();
    }

    /** Names the placement that justifies the eviction: the same queue's higher priority first, else reclaim. */
    private static String preemptionReason(GangAssignment victim, List<GangAssignment> placed, boolean towardFairShare) {
        Set<Integer> victimNodes = new HashSet<>();
        victim.current().tasks().forEach(t -> victimNodes.add(t.node()));
        GangAssignment best = null;
        for (GangAssignment p : placed) {
            if (p.queue().equals(victim.queue()) && p.priority() > victim.priority()) {
                boolean onVictimNodes = p.getOption().tasks().stream().anyMatch(t -> victimNodes.contains(t.node()));
                if (best == null || onVictimNodes) {
                    best = p;
                    if (onVictimNodes) {
                        break;
                    }
                }
            }
        }
        if (best != null) {
            return "preempted by " + best.getJob() + " (priority " + best.priority() + " > " + victim.priority() + ", queue " + victim.queue() + ")";
        }
        for (GangAssignment p : placed) {
            if (!p.queue().equals(victim.queue()) && p.getOption().tasks().stream().anyMatch(t -> victimNodes.contains(t.node()))) {
                best = p;
                break;
            }
        }
        if (best == null) {
            best = placed.stream().filter(p -> !p.queue().equals(victim.queue())).findFirst().orElse(null);
        }
        return "reclaimed by " + (best == null ? "another queue" : best.getJob() + " of queue " + best.queue())
                + ": queue " + victim.queue() + " borrowed GPUs above its "
                + (towardFairShare ? "guarantee and fair share, " + victim.queueFacts().guaranteeMilli() / 1000.0 + " GPUs"
                        : "guarantee of " + victim.queueFacts().guaranteeMilli() / 1000);
    }
}
