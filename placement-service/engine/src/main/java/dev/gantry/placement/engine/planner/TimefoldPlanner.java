package dev.gantry.placement.engine.planner;


import ai.timefold.solver.core.api.domain.solution.ConstraintWeightOverrides;
import ai.timefold.solver.core.api.score.HardMediumSoftScore;
import ai.timefold.solver.core.api.solver.Solver;
import ai.timefold.solver.core.api.solver.SolverFactory;
import dev.gantry.placement.engine.domain.Plan;
import dev.gantry.placement.engine.domain.Scenario;
import dev.gantry.placement.engine.packing.GangPacker;
import dev.gantry.placement.engine.packing.GreedyPass;
import dev.gantry.placement.engine.packing.WorkloadMix;
import dev.gantry.placement.engine.solver.OptionGenerator;
import dev.gantry.placement.engine.solver.PlacementModel;
import dev.gantry.placement.engine.solver.PlacementSolution;
import dev.gantry.placement.engine.solver.PlanExtractor;
import dev.gantry.placement.engine.solver.SolverConfigs;
import dev.gantry.placement.engine.validation.PlanMetrics;
import dev.gantry.placement.engine.validation.PlanValidator;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Timefold planner: greedy's plan seeds the solver, local search improves it until the
 * profile's deadline, and the best plan is checked before it is returned. If it is invalid or
 * worse than greedy on net priority-weighted GPUs, greedy's plan is returned instead, and
 * {@code metadata.fallback} says why.
 */
public final class TimefoldPlanner implements Planner {
    /** The arrivals the fragmentation gauge keeps room for; null: the window's own workload. */
    private final WorkloadMix mix;
    /** Local search moves per solve in the reproducible mode; null: bound by the deadline. */
    private final Long movesPerSolve;

    public TimefoldPlanner() {
        this(null);
    }

    /** @param mix the pods that arrived lately, recorded by the caller (may be null) */
    public TimefoldPlanner(WorkloadMix mix) {
        this(mix, null);
    }

    /**
     * @param mix           the pods that arrived lately, recorded by the caller (may be null)
     * @param movesPerSolve null: each solve is bound by the profile's deadline (the service);
     *                      else each solve evaluates at most this many local search moves with a
     *                      fixed seed, whatever the clock says, so that a replay repeats to the
     *                      decimal ({@link SolverConfigs#reproducible}); the deadline is then ignored
     */
    public TimefoldPlanner(WorkloadMix mix, Long movesPerSolve) {
        if (movesPerSolve != null && movesPerSolve <= 0) {
            throw new IllegalArgumentException("moves per solve must be positive");
        }
        this.mix = mix;
        this.movesPerSolve = movesPerSolve;
    }

    /** Set {@code -Dgantry.fullAssert=true} to run the solver in FULL_ASSERT (slow: catches score corruption). */
    public static final String FULL_ASSERT_PROPERTY = "gantry.fullAssert";
    private static final Logger LOG = LoggerFactory.getLogger(TimefoldPlanner.class);
    /** Options per cluster state for a pending gang and for a migration (see {@link OptionGenerator}). */
    static final int PENDING_OPTIONS_PER_STATE = 3;
    static final int MIGRATION_OPTIONS_PER_STATE = 2;
    /**
     * Before the model is built: what building it and starting the solve cost per entity, in
     * microseconds (5,000 nodes: a model of ~14,000 entities in 0.75-1.2 s, then ~0.1 s of start-up).
     */
    static final long MODEL_AND_STARTUP_MICROS_PER_ENTITY = 60;
    /**
     * Measured start-up of a solve per entity (first clone and score session), in microseconds:
     * 87 ms for 14,164 entities, 37-53 ms for 2,862 (2026-12-07, load ~4), kept at about twice
     * that for a busy core. It was 60 (the whole model's cost as well, before the reclaim check
     * was indexed and the clones made by hand): at 5,000 nodes and 3 s that took ~600 ms of a
     * ~1 s solve off Timefold's own limit, and the solve stopped long before the window's deadline.
     */
    static final long STARTUP_MICROS_PER_ENTITY = 15;
    /** The solver always gets at least this long. */
    static final Duration MIN_SOLVE = Duration.ofMillis(30);
    /** Extra time for the first solve of a JVM (see {@link #plan}). */
    static final Duration COLD_START_ALLOWANCE = Duration.ofMillis(700);
    private static final java.util.concurrent.atomic.AtomicBoolean COLD = new java.util.concurrent.atomic.AtomicBoolean(true);

    @Override
    public String name() {
        return "timefold";
    }

    @Override
    public boolean movesWork() {
        return true;
    }

    @Override
    public Plan plan(Scenario sc, SolverProfile profile) {
        long start = System.nanoTime();
        var weights = SolverConfigs.weights(profile.weightOverrides());
        // the seed and the options pack by expected fragmentation, as the fast path does
        GangPacker packer = GangPacker.forWindow(sc, mix, profile.gpuSpeeds());
        // plain best fit, the floor's other candidate, is packed on another core meanwhile
        CompletableFuture<GreedyPass.Result> bestFit = CompletableFuture.supplyAsync(() -> GreedyPass.run(sc, false, new GangPacker(sc.nodes())));
        GreedyPass.Result greedy = GreedyPass.run(sc, false, packer);
        Map<String, String> meta = new LinkedHashMap<>();
        CompletableFuture<GreedyPass.Result> floor = greedy.plan().unplaced().isEmpty()
                ? CompletableFuture.completedFuture(greedy) // every job placed: best fit cannot place more
                : bestFit.thenApply(bf -> betterOf(sc, greedy, bf));
        meta.put("planner", name());
        meta.put("profile", movesPerSolve == null ? profile.name() : "reproducible, " + movesPerSolve + " moves");
        meta.put("seedMillis", Long.toString((System.nanoTime() - start) / 1_000_000));
        if (sc.pending().isEmpty()) {
            return finish(greedy.plan(), start, meta);
        }
        try {
            return solve(sc, profile, weights, packer, greedy, floor, meta, start);
        } catch (RuntimeException e) {
            if (Boolean.getBoolean(FULL_ASSERT_PROPERTY)) {
                throw e; // score corruption must fail the FULL_ASSERT run, not hide behind greedy
            }
            // a solver failure is a bug to fix, but the window still gets greedy's valid plan
            LOG.error("{}: solver failed, greedy plan returned", sc.name(), e);
            meta.put("fallback", "solver failed (" + e + "), greedy plan returned");
            return finish(GreedyPass.explained(sc, floor(floor, greedy, meta)), start, meta);
        }
    }

    /** The floor once worked out; says in the metadata when plain best fit is it. */
    private static GreedyPass.Result floor(CompletableFuture<GreedyPass.Result> floor, GreedyPass.Result seed, Map<String, String> meta) {
        GreedyPass.Result f = floor.join();
        if (f != seed) {
            meta.put("floor", "plain best fit (it does better on guarantees, then placed GPUs, than packing by expected fragmentation)");
        }
        return f;
    }

    /**
     * What any returned plan must at least match: the fragmentation-aware seed, or plain best fit
     * where it leaves queues less under their guarantees or, equal there, places more (packing for
     * later may place less now). So timefold is never worse
     * than the {@code greedy} planner, while the solver still starts from, and draws its options
     * around, the seed that packs for later (starting from the floor instead, where best fit wins,
     * measured no better at 5,000 nodes and 0.4-0.7% lower at 200 nodes).
     */
    private static GreedyPass.Result betterOf(Scenario sc, GreedyPass.Result seed, GreedyPass.Result bestFit) {
        // in the order every plan is judged: guarantees first, then priority-weighted GPUs
        long bestFitShort = GuaranteeShortfall.milli(sc, bestFit.plan());
        long seedShort = GuaranteeShortfall.milli(sc, seed.plan());
        if (bestFitShort != seedShort) {
            return bestFitShort < seedShort ? bestFit : seed;
        }
        return PlanMetrics.of(sc, bestFit.plan()).netPriorityGpus() > PlanMetrics.of(sc, seed.plan()).netPriorityGpus() + 1e-9
                ? bestFit : seed;
    }

    private Plan solve(Scenario sc, SolverProfile profile, ConstraintWeightOverrides<HardMediumSoftScore> weights,
            GangPacker packer, GreedyPass.Result greedy, CompletableFuture<GreedyPass.Result> floor, Map<String, String> meta, long start) {
        // the greedy state must stay as greedy left it: the fallback explains from it
        if (movesPerSolve != null) {
            return solveReproducibly(sc, profile, weights, packer, greedy, floor, meta, start);
        }
        long entities = sc.pending().size() + sc.running().stream().filter(r -> !r.pinned()).count();
        if (!COLD.get() && profile.spentLimit().minusNanos(System.nanoTime() - start)
                .compareTo(Duration.ofMillis(20 + entities * MODEL_AND_STARTUP_MICROS_PER_ENTITY / 1000).plus(MIN_SOLVE)) < 0) {
            // greedy alone used the window: building options would only make the answer late
            meta.put("fallback", "no time left for the solver after the greedy seed, greedy plan returned");
            return finish(GreedyPass.explained(sc, floor(floor, greedy, meta)), start, meta);
        }
        PlacementModel model = model(sc, profile, weights, packer, greedy, meta, start);
        // the deadline covers the whole call: keep time to turn the solution into a checked plan
        // (measured: plan extraction and checks about 60 us per entity on a busy core)
        Duration reserve = Duration.ofMillis(Math.min(profile.spentLimit().toMillis() / 4,
                30 + model.solution().getAssignments().size() / 15));
        Duration left = profile.spentLimit().minusNanos(System.nanoTime() - start).minus(reserve);
        // the solver spends about this before its first step (score session over every option)
        Duration startup = startup(model.solution().getAssignments().size());
        boolean cold = COLD.getAndSet(false);
        if (!cold && left.compareTo(startup.plus(MIN_SOLVE)) < 0) {
            // too little of the window is left to improve anything: greedy's plan, now, beats a late one
            meta.put("fallback", "no time left for the solver (" + Math.max(0, left.toMillis()) + " ms, needs about "
                    + startup.plus(MIN_SOLVE).toMillis() + " ms), greedy plan returned");
            return finish(GreedyPass.explained(sc, floor(floor, greedy, meta)), start, meta);
        }
        // Timefold starts its clock after building the score session: that start-up comes out of the window too
        left = left.minus(startup);
        if (left.compareTo(MIN_SOLVE) < 0) {
            left = MIN_SOLVE;
        }
        if (cold) {
            // the first solve in a JVM pays Timefold's bootstrap (class loading, stream compilation);
            // without this allowance a cold CLI run would hit its deadline before the first step
            left = left.plus(COLD_START_ALLOWANCE);
            meta.put("coldStartAllowanceMillis", Long.toString(COLD_START_ALLOWANCE.toMillis()));
        }
        left = Duration.ofMillis(left.toMillis()); // Timefold takes whole milliseconds
        boolean fullAssert = Boolean.getBoolean(FULL_ASSERT_PROPERTY);
        Solver<PlacementSolution> solver = SolverFactory.<PlacementSolution>create(
                SolverConfigs.create(left, unimproved(profile, left), fullAssert)).buildSolver();
        long solveStart = System.nanoTime();
        // Timefold's spent limit starts after its start-up, which is only estimated above: the
        // window's own deadline (less the reserve for the plan's extraction) is kept by the clock
        long deadline = start + profile.spentLimit().toNanos() - reserve.toNanos() + (cold ? COLD_START_ALLOWANCE.toNanos() : 0);
        ScheduledFuture<?> guard = DeadlineGuard.TIMER.schedule(solver::terminateEarly,
                Math.max(MIN_SOLVE.toNanos(), deadline - solveStart), TimeUnit.NANOSECONDS);
        PlacementSolution best;
        try {
            best = solver.solve(model.solution());
        } finally {
            guard.cancel(false);
        }
        return checked(sc, model, best, solveStart, greedy, floor, meta, start);
    }

    /** The reproducible mode: no clock anywhere, so no deadline fallbacks and no guard. */
    private Plan solveReproducibly(Scenario sc, SolverProfile profile, ConstraintWeightOverrides<HardMediumSoftScore> weights,
            GangPacker packer, GreedyPass.Result greedy, CompletableFuture<GreedyPass.Result> floor, Map<String, String> meta, long start) {
        PlacementModel model = model(sc, profile, weights, packer, greedy, meta, start);
        Solver<PlacementSolution> solver = SolverFactory.<PlacementSolution>create(
                SolverConfigs.reproducible(movesPerSolve, Boolean.getBoolean(FULL_ASSERT_PROPERTY))).buildSolver();
        long solveStart = System.nanoTime();
        PlacementSolution best = solver.solve(model.solution());
        return checked(sc, model, best, solveStart, greedy, floor, meta, start);
    }

    /** The solver's model around the greedy seed; its size and build time go into the plan's metadata. */
    private static PlacementModel model(Scenario sc, SolverProfile profile, ConstraintWeightOverrides<HardMediumSoftScore> weights,
            GangPacker packer, GreedyPass.Result greedy, Map<String, String> meta, long start) {
        PlacementModel model = new OptionGenerator(sc, greedy, packer, PENDING_OPTIONS_PER_STATE, MIGRATION_OPTIONS_PER_STATE,
                profile.moveCost(), profile.reclaimTowardFairShare(), profile.fairShareTrees()).build(weights);
        meta.put("modelMillis", Long.toString((System.nanoTime() - start) / 1_000_000));
        meta.put("entities", Integer.toString(model.solution().getAssignments().size()));
        meta.put("options", Integer.toString(model.optionCount()));
        return model;
    }

    /** The solver's best as a plan, if it is valid, feasible and at least the floor; else the floor's plan. */
    private Plan checked(Scenario sc, PlacementModel model, PlacementSolution best, long solveStart, GreedyPass.Result greedy,
            CompletableFuture<GreedyPass.Result> floor, Map<String, String> meta, long start) {
        meta.put("solverMillis", Long.toString((System.nanoTime() - solveStart) / 1_000_000));
        meta.put("score", String.valueOf(best.getScore()));
        Plan plan = PlanExtractor.toPlan(model, best, 0, meta);
        meta.put("extractMillis", Long.toString((System.nanoTime() - solveStart) / 1_000_000));
        List<String> violations = PlanValidator.validate(sc, plan);
        double solverNet = PlanMetrics.of(sc, plan).netPriorityGpus();
        Plan floorPlan = floor(floor, greedy, meta).plan();
        double greedyNet = PlanMetrics.of(sc, floorPlan).netPriorityGpus();
        // guarantees first (across queues, whatever the priorities), then priority-weighted GPUs
        long solverShort = GuaranteeShortfall.milli(sc, plan, model.towardFairShare(), model.fairShareTrees());
        long greedyShort = GuaranteeShortfall.milli(sc, floorPlan, model.towardFairShare(), model.fairShareTrees());
        meta.put("guaranteeShortfallGpus", solverShort / 1000.0 + " (floor " + greedyShort / 1000.0 + ")");
        String fallback = null;
        if (!violations.isEmpty()) {
            fallback = "solver plan invalid (" + violations.getFirst() + "), greedy plan returned";
        } else if (best.getScore() == null || !best.getScore().isFeasible()) {
            fallback = "solver plan infeasible (" + best.getScore() + "), greedy plan returned";
        } else if (solverShort > greedyShort) {
            fallback = "solver leaves queues " + solverShort / 1000.0 + " GPUs under their guarantees" + (model.towardFairShare() ? " and fair shares" : "") + ", greedy "
                    + greedyShort / 1000.0 + ", greedy plan returned";
        } else if (solverShort == greedyShort && solverNet + 1e-9 < greedyNet) {
            fallback = "solver netPriorityGpus " + solverNet + " < greedy " + greedyNet + ", greedy plan returned";
        }
        if (fallback != null) {
            LOG.warn("{}: {}", sc.name(), fallback);
            meta.put("fallback", fallback);
            return finish(GreedyPass.explained(sc, floor(floor, greedy, meta)), start, meta);
        }
        return finish(plan, start, meta);
    }

    /** One daemon thread that ends solves at their window's deadline. */
    private static final class DeadlineGuard {
        static final ScheduledExecutorService TIMER = Executors.newSingleThreadScheduledExecutor(task -> {
            Thread thread = new Thread(task, "gantry-solver-deadline");
            thread.setDaemon(true);
            return thread;
        });
    }

    /** About what a solve spends before its first step (the score session over every option). */
    private static Duration startup(long entities) {
        return Duration.ofMillis(20 + entities * STARTUP_MICROS_PER_ENTITY / 1000);
    }

    /** The stall limit, never shorter than the bootstrap share of the first step. */
    private static Duration unimproved(SolverProfile profile, Duration left) {
        Duration u = profile.unimprovedLimit().plus(left.minus(profile.spentLimit()).isNegative() ? Duration.ZERO : left.minus(profile.spentLimit()));
        return u.compareTo(left) > 0 ? left : Duration.ofMillis(u.toMillis());
    }

    private static Plan finish(Plan plan, long start, Map<String, String> meta) {
        Map<String, String> merged = new LinkedHashMap<>(plan.metadata());
        merged.putAll(meta);
        return new Plan(plan.format(), plan.scenario(), plan.placements(), plan.preemptions(), plan.migrations(), plan.unplaced(),
                (System.nanoTime() - start) / 1_000_000, merged);
    }
}
