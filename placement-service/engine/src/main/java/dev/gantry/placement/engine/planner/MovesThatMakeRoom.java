package dev.gantry.placement.engine.planner;

import dev.gantry.placement.engine.domain.Migration;
import dev.gantry.placement.engine.domain.Placement;
import dev.gantry.placement.engine.domain.Plan;
import dev.gantry.placement.engine.domain.RunningJob;
import dev.gantry.placement.engine.domain.RunningTask;
import dev.gantry.placement.engine.domain.Scenario;
import dev.gantry.placement.engine.domain.TaskPlacement;
import dev.gantry.placement.engine.validation.PlanValidator;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The live service moves a running job only to make room for work it places in the same plan
 * (issue 23: a move stops a job, checkpoints it and starts it again; consolidation for its own sake
 * is a separate, scheduled pass). The solver may still propose a move that only lowers
 * fragmentation; this keeps the moves whose GPUs a placement of the plan takes, or a kept move
 * takes (a chain), and drops the rest. If what is left is not a valid plan, nothing is moved and
 * only the placements that need no move are kept, so a plan never half-applies a chain.
 */
public final class MovesThatMakeRoom {
    private MovesThatMakeRoom() {
    }

    public static Plan keep(Scenario sc, Plan plan) {
        if (plan.migrations().isEmpty()) {
            return plan;
        }
        Map<String, RunningJob> running = new HashMap<>();
        sc.running().forEach(j -> running.put(j.name(), j));
        Set<String> wanted = new HashSet<>();
        plan.placements().forEach(p -> p.tasks().forEach(t -> wanted.addAll(slots(t))));
        List<Migration> kept = new ArrayList<>();
        List<Migration> left = new ArrayList<>(plan.migrations());
        boolean grew = true;
        while (grew) {
            grew = false;
            for (var it = left.iterator(); it.hasNext(); ) {
                Migration m = it.next();
                RunningJob job = running.get(m.job());
                if (job != null && job.tasks().stream().anyMatch(t -> held(t).stream().anyMatch(wanted::contains))) {
                    kept.add(m);
                    m.tasks().forEach(t -> wanted.addAll(slots(t)));
                    it.remove();
                    grew = true;
                }
            }
        }
        if (left.isEmpty()) {
            return plan;
        }
        Plan trimmed = with(plan, plan.placements(), kept, "dropped " + left.size() + " move(s) that made room for nothing");
        if (PlanValidator.validate(sc, trimmed).isEmpty()) {
            return trimmed;
        }
        // a move dropped from a chain: keep only what needs no move at all
        Set<String> moved = new HashSet<>();
        plan.migrations().forEach(m -> running.get(m.job()).tasks().forEach(t -> moved.addAll(held(t))));
        List<Placement> standalone = plan.placements().stream()
                .filter(p -> p.tasks().stream().noneMatch(t -> slots(t).stream().anyMatch(moved::contains))).toList();
        return with(plan, standalone, List.of(), "dropped every move: some made room for nothing and the rest depended on them");
    }

    private static Plan with(Plan plan, List<Placement> placements, List<Migration> migrations, String why) {
        return new Plan(plan.format(), plan.scenario(), placements, plan.preemptions(), migrations, plan.unplaced(), plan.solveMillis(),
                plan.metadata()).withMetadata(Map.of("movesDropped", why));
    }

    private static List<String> slots(TaskPlacement t) {
        return keys(t.node(), t.gpus(), t.migDevices());
    }

    private static List<String> held(RunningTask t) {
        return keys(t.node(), t.gpus(), t.migDevices());
    }

    /** A device as a key: {@code node/gpu}, or {@code node/mig/id} for a MIG device. */
    private static List<String> keys(String node, List<Integer> gpus, List<String> migDevices) {
        List<String> out = new java.util.ArrayList<>(gpus.size() + migDevices.size());
        gpus.forEach(g -> out.add(node + "/" + g));
        migDevices.forEach(m -> out.add(node + "/mig/" + m));
        return out;
    }
}
