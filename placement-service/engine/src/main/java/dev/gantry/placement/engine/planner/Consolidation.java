package dev.gantry.placement.engine.planner;

import dev.gantry.placement.engine.domain.Plan;
import dev.gantry.placement.engine.domain.PendingJob;
import dev.gantry.placement.engine.domain.Queue;
import dev.gantry.placement.engine.domain.RunningJob;
import dev.gantry.placement.engine.domain.Scenario;
import dev.gantry.placement.engine.packing.GangPacker;
import dev.gantry.placement.engine.packing.GreedyPass;
import dev.gantry.placement.engine.validation.PlanValidator;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Consolidation for its own sake (issue 23, item 4): with nothing waiting, move running work so
 * that a gang shape that waited long finds room when it comes again. Each shape, in the order
 * given (the longest waits first), is tried as a stand-in job in a queue of its own: if it fits
 * now there is room already; otherwise the planner places it by moving migratable running jobs
 * (no one is preempted; when the solver finds none, for instance out of time on a loaded machine,
 * {@link RoomByMoves} looks for them without it), and the moves that make its room
 * ({@link MovesThatMakeRoom}) are the answer, if there are at most {@code maxMoves} of them. The first shape that gets room that way
 * is the pass's plan: moves only, no placement (the stand-in is not a job). Plain Java; the
 * caller decides when a pass runs and which jobs its budget lets move.
 */
public final class Consolidation {

    /** The stand-in's queue: unbounded and guaranteed nothing, so it neither borrows nor reclaims. */
    public static final String QUEUE = "gantry-consolidation";

    /**
     * A pass's answer: {@code plan} holds the moves (none when nothing is to be done), {@code shape}
     * the shape they make room for (null then), {@code reason} what was found, for the log.
     */
    public record Outcome(Plan plan, PendingJob shape, String reason) {
        public boolean moves() {
            return !plan.migrations().isEmpty();
        }
    }

    private Consolidation() {
    }

    /**
     * @param sc       the cluster now; its pending jobs are ignored, its running jobs may move when marked migratable
     * @param shapes   gang shapes to make room for, most wanted first
     * @param planner  the planner that finds the moves (only the solver plans moves)
     * @param maxMoves at most this many jobs moved for one shape
     */
    public static Outcome plan(Scenario sc, List<PendingJob> shapes, Planner planner, SolverProfile profile, int maxMoves) {
        List<String> found = new ArrayList<>();
        if (maxMoves <= 0 || sc.running().stream().noneMatch(RunningJob::migratable)) {
            return new Outcome(empty(sc, Map.of()), null, "no running job may move now");
        }
        // a pass moves work, it never evicts it
        List<RunningJob> running = sc.running().stream().map(Consolidation::notPreemptible).toList();
        List<Queue> queues = new ArrayList<>(sc.queues());
        queues.add(new Queue(QUEUE, 1, 0, null, true, null));
        for (int i = 0; i < shapes.size(); i++) {
            PendingJob shape = shapes.get(i);
            PendingJob standIn = standIn(shape, "room-for-" + i, sc.nowSeconds());
            Scenario probe = new Scenario(Scenario.FORMAT, sc.name() + "-consolidation", sc.nowSeconds(), sc.nodes(), queues, running,
                    List.of(standIn));
            String label = describe(shape);
            if (!GreedyPass.run(probe, false, new GangPacker(probe.nodes())).plan().placements().isEmpty()) {
                found.add(label + ": room already");
                continue;
            }
            Plan plan = MovesThatMakeRoom.keep(probe, planner.plan(probe, profile));
            if (plan.placements().isEmpty() || plan.migrations().isEmpty()) {
                // the solver out of time returns best fit's plan, which never moves: try the moves that need no solver
                Plan greedyMoves = planner.movesWork() ? RoomByMoves.find(probe, standIn, maxMoves) : null;
                if (greedyMoves == null) {
                    found.add(label + ": no moves make room");
                    continue;
                }
                plan = greedyMoves;
            }
            if (plan.migrations().size() > maxMoves) {
                found.add(label + ": needs " + plan.migrations().size() + " moves, at most " + maxMoves);
                continue;
            }
            String nodes = String.join(",", plan.placements().getFirst().tasks().stream().map(t -> t.node()).distinct().toList());
            Map<String, String> meta = new LinkedHashMap<>(plan.metadata());
            meta.put("consolidation", "room for " + label + " on " + nodes + " by " + plan.migrations().size() + " move(s)");
            Plan moves = new Plan(Plan.FORMAT, sc.name(), List.of(), List.of(), plan.migrations(), List.of(), plan.solveMillis(), meta);
            List<String> problems = PlanValidator.validate(sc, moves);
            if (!problems.isEmpty()) {
                found.add(label + ": moves invalid (" + problems.getFirst() + ")");
                continue;
            }
            found.add(meta.get("consolidation"));
            return new Outcome(moves, shape, String.join("; ", found));
        }
        return new Outcome(empty(sc, Map.of()), null, found.isEmpty() ? "no shapes to make room for" : String.join("; ", found));
    }

    /** A shape as people say it: pods x GPUs per task group, and the GPU models it may use. */
    public static String describe(PendingJob shape) {
        StringBuilder sb = new StringBuilder();
        shape.taskGroups().forEach(g -> sb.append(sb.isEmpty() ? "" : "+").append(g.replicas()).append('x')
                .append(g.gpuMilli() != null ? g.gpuMilli() + "m" : g.gpusPerReplica() + " GPUs"));
        if (!shape.gpuModels().isEmpty()) {
            sb.append(' ').append(shape.gpuModels());
        }
        return sb.toString();
    }

    private static PendingJob standIn(PendingJob shape, String name, long now) {
        return new PendingJob(name, QUEUE, 0, now, shape.taskGroups(), shape.minAvailable(), shape.gpuModels(), shape.gpuTopology(),
                shape.network(), shape.requireInfiniBand(), shape.nodeSelector(), shape.tolerations(), false, false, null);
    }

    private static RunningJob notPreemptible(RunningJob r) {
        return !r.preemptible() ? r : new RunningJob(r.name(), r.queue(), r.priority(), false, r.checkpointable(), r.migratable(),
                r.startedAtSeconds(), r.tasks(), r.nodeSelector(), r.tolerations());
    }

    private static Plan empty(Scenario sc, Map<String, String> meta) {
        return new Plan(Plan.FORMAT, sc.name(), List.of(), List.of(), List.of(), List.of(), 0, meta);
    }
}
