package dev.gantry.placement.window;

import dev.gantry.contracts.events.Subjects;
import dev.gantry.contracts.jobs.JobQueued;
import dev.gantry.contracts.nodes.NodeInfo;
import dev.gantry.contracts.placements.PlacementPending;
import dev.gantry.contracts.quota.QuotaShares;
import dev.gantry.kit.outbox.Outbox;
import dev.gantry.placement.cluster.Leadership;
import dev.gantry.placement.engine.domain.Placement;
import dev.gantry.placement.engine.domain.Plan;
import dev.gantry.placement.engine.domain.Scenario;
import dev.gantry.placement.engine.json.Violation;
import dev.gantry.placement.engine.packing.GpuSpeeds;
import dev.gantry.placement.engine.packing.WorkloadMix;
import dev.gantry.placement.engine.planner.Planner;
import dev.gantry.placement.engine.planner.Consolidation;
import dev.gantry.placement.engine.planner.MovesThatMakeRoom;
import dev.gantry.placement.engine.planner.GreedyWhenAllFit;
import dev.gantry.placement.engine.planner.Planners;
import dev.gantry.placement.engine.planner.SolverProfile;
import dev.gantry.placement.engine.solver.MoveCost;
import dev.gantry.placement.engine.solver.SolverConfigs;
import dev.gantry.placement.engine.validation.PlanValidator;
import dev.gantry.placement.engine.validation.ScenarioValidator;
import dev.gantry.placement.persistence.PendingJob;
import io.quarkus.hibernate.reactive.panache.Panache;
import io.quarkus.scheduler.Scheduled;
import io.quarkus.vertx.core.runtime.context.VertxContextSafetyToggle;
import io.smallrye.common.vertx.VertxContext;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.core.Vertx;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.jboss.logging.Logger;

/**
 * The scheduling window: every {@code gantry.placement.window} it brings nodes, running jobs
 * (allocations), pending jobs and the latest quota shares up to date from the database (only the rows
 * that changed: see {@link StateCache}), builds one immutable engine scenario, plans it
 * off the event loop with the configured planner and profile, checks the plan with the engine's
 * {@link PlanValidator} (an invalid plan is logged, counted and dropped), and hands a valid one to
 * the {@link Binder}; the reasons of jobs left waiting go back to admission. Between windows, a job
 * that fits at once takes the {@link #fastPath fast path}. Windows and fast paths never overlap;
 * nothing is planned while nothing waits, and only the leading replica plans.
 */
@ApplicationScoped
public class WindowLoop {

    private static final Logger LOG = Logger.getLogger(WindowLoop.class);
    private static final Pattern PENDING_FIELD = Pattern.compile("^pending\\[(\\d+)]");

    private final Binder binder;
    private final StateCache stateCache;
    private final Outbox outbox;
    private final Vertx vertx;
    private final Leadership leadership;
    private final NodeQuarantine quarantine;
    /** The waiting jobs' start-time forecast, recomputed after each window that planned. */
    private final StartForecasts forecasts;
    /** One forecast at a time: a window finding the last still running leaves this one's to the next. */
    private final AtomicBoolean forecasting = new AtomicBoolean();
    /** Which running jobs the solver may move this window (moves per hour, spacing, protection after placement). */
    private final DisruptionBudget moves;
    /** How long gangs of each shape waited: recorded as they are bound, for scheduled consolidation. */
    private final GangWaits waits;
    /** Nodes and running work an idle window last found consistent (see {@link #recheckQuarantine}). */
    private volatile List<Object> lastConsistent;
    private final WindowMetrics metrics;
    /** The configured planner; each window and fast path plans through {@link Planners#window} around it (the reservations). */
    private final Planner planner;
    /** How many waiting jobs that do not fit get a reservation (EASY: 1; 0: none). */
    private final int reservations;
    /** The reservations count per queue (each queue's heads), not in all: one queue's head cannot leave another's without one. */
    private final boolean reservationsPerQueue;
    /** Runtime estimates for the reservations: the job's own, else learned from completed jobs, else the default. */
    private final RuntimeHistory history;
    /** The pods that arrived lately: what the planners' fragmentation gauge keeps room for. */
    private final WorkloadMix arrivals = new WorkloadMix();
    private final SolverProfile profile;
    private final boolean fastPathEnabled;
    /** How much of the profile's limit the solver keeps when reading and binding take part of the window (all, by default). */
    private final WindowBudget budget;
    /** One write of pending reasons at a time: a window whose reasons find the last write still busy leaves them to the next. */
    private final AtomicBoolean writingReasons = new AtomicBoolean();
    /** Windows and fast paths never overlap: each plans against the state the other may be changing. */
    private final AtomicBoolean planning = new AtomicBoolean();
    /** Jobs that arrived while something else planned: their fast path runs as soon as it is done. */
    private final Queue<Deferred> deferred = new ConcurrentLinkedQueue<>();
    /** More jobs than this arriving within a second (or waiting for their fast path) are a burst, planned by a window. */
    static final int FAST_PATH_BACKLOG = 8;
    private final RecentArrivals recentArrivals = new RecentArrivals(1_000_000_000L);
    /**
     * The least time from one burst window's start to the next: arrivals meanwhile wait and are planned
     * together. A window costs about the same whatever it plans (it reads and checks the whole cluster),
     * so windows back to back during a burst spent that cost on a handful of jobs each.
     */
    private final long burstGapNanos;
    /** A burst window is due (its timer is set or it fired and waits for the planner to be free). */
    private final AtomicBoolean burstWindowDue = new AtomicBoolean();
    /** Its timer fired: it starts as soon as nothing else plans. */
    private final AtomicBoolean burstWindowReady = new AtomicBoolean();
    private volatile long lastBurstWindowNanos;

    private record Deferred(UUID jobId, long receivedNanos) {
    }

    /** What one window reads from the database. */
    record State(List<NodeInfo> nodes, List<ScenarioBuilder.Placed> placed, List<ScenarioBuilder.Held> held,
            List<ScenarioBuilder.Waiting> waiting, List<QuotaShares.QueueShare> shares) {
    }

    /**
     * A valid plan and its scenario; {@code refused}: pending jobs the engine would not plan, with why;
     * {@code solvedAt}: when the planner returned (nanoTime).
     */
    record Decision(Scenario scenario, Plan plan, Map<UUID, String> refused, long solvedAt) {

        Decision(Scenario scenario, Plan plan, Map<UUID, String> refused) {
            this(scenario, plan, refused, System.nanoTime());
        }
    }

    public WindowLoop(Binder binder, StateCache stateCache, Outbox outbox, Vertx vertx, Leadership leadership, WindowMetrics metrics,
            NodeQuarantine quarantine, RuntimeHistory history, StartForecasts forecasts, DisruptionBudget moves, GangWaits waits,
            @ConfigProperty(name = "gantry.placement.reservations", defaultValue = "1") int reservations,
            @ConfigProperty(name = "gantry.placement.reservation.per-queue", defaultValue = "false") boolean reservationsPerQueue,
            @ConfigProperty(name = "gantry.placement.planner", defaultValue = "timefold") String plannerName,
            @ConfigProperty(name = "gantry.placement.profile", defaultValue = "fast") String profileName,
            @ConfigProperty(name = "gantry.placement.fast-path.enabled", defaultValue = "true") boolean fastPathEnabled,
            @ConfigProperty(name = "gantry.placement.burst.window-gap", defaultValue = "250ms") java.time.Duration burstGap,
            @ConfigProperty(name = "gantry.placement.weights") Optional<String> weights,
            @ConfigProperty(name = "gantry.placement.gpu-speeds") Optional<String> gpuSpeeds,
            @ConfigProperty(name = "gantry.placement.move-cost.per-move") Optional<Long> moveCostPerMove,
            @ConfigProperty(name = "gantry.placement.move-cost.per-gpu") Optional<Long> moveCostPerGpu,
            @ConfigProperty(name = "gantry.placement.solver.min-share", defaultValue = "1") double solverMinShare,
            @ConfigProperty(name = "gantry.placement.reclaim.toward-fair-share", defaultValue = "false") boolean reclaimTowardFairShare,
            @ConfigProperty(name = "gantry.placement.reclaim.fair-share-trees") Optional<List<String>> fairShareTrees) {
        this.binder = binder;
        this.stateCache = stateCache;
        this.outbox = outbox;
        this.vertx = vertx;
        this.leadership = leadership;
        this.metrics = metrics;
        this.quarantine = quarantine;
        this.forecasts = forecasts;
        this.moves = moves;
        this.waits = waits;
        this.planner = Planners.byName(plannerName, arrivals);
        if (reservations < 0) {
            throw new IllegalArgumentException("gantry.placement.reservations must be 0 (off) or more, got " + reservations);
        }
        this.reservations = reservations;
        this.reservationsPerQueue = reservationsPerQueue;
        this.history = history;
        this.profile = profile(profileName, weights, gpuSpeeds, moveCostPerMove, moveCostPerGpu, reclaimTowardFairShare)
                .withFairShareTrees(fairShareTrees(fairShareTrees));
        // refuse a bad weight at start, with the engine's words, rather than in every window
        SolverConfigs.weights(profile.weightOverrides());
        this.fastPathEnabled = fastPathEnabled;
        if (burstGap.isNegative()) {
            throw new IllegalArgumentException("gantry.placement.burst.window-gap must be 0 or more, got " + burstGap);
        }
        this.burstGapNanos = burstGap.toNanos();
        this.lastBurstWindowNanos = System.nanoTime() - burstGapNanos;
        this.budget = new WindowBudget(profile.spentLimit(), solverMinShare);
        metrics.limit(profile.spentLimit());
    }

    @Scheduled(every = "${gantry.placement.window:2s}", concurrentExecution = Scheduled.ConcurrentExecution.SKIP,
            skipExecutionIf = Scheduled.ApplicationNotRunning.class)
    Uni<Void> window() {
        return runWindow().onFailure().recoverWithItem(e -> {
            LOG.errorf(e, "scheduling window failed");
            return 0;
        }).replaceWithVoid();
    }

    /** One window; the item is the number of jobs bound (0 when another window or a fast path is planning). */
    public Uni<Integer> runWindow() {
        if (!leadership.leading() || !planning.compareAndSet(false, true)) {
            return Uni.createFrom().item(0);
        }
        return windowBody(false).eventually(this::donePlanning);
    }

    /**
     * {@code burst}: the window plans a burst of arrivals, as their fast paths would have, so when the
     * greedy plan places every one of them without moving anyone it is bound as it is, without a solve
     * ({@link Planners#greedyWhenAllFit}); the scheduled windows keep polishing with the solver.
     */
    private Uni<Integer> windowBody(boolean burst) {
        long start = System.nanoTime();
        Instant now = Instant.now();
        long[] mark = {start};
        List<String> steps = new ArrayList<>(); // said in the log line of a window that overran
        return Panache.withSession(stateCache::read).chain(state -> {
            mark[0] = phase("read", mark[0], steps);
            metrics.observeState(now, state);
            mark[0] = phase("gauges", mark[0], steps);
            if (state.waiting().isEmpty() || state.nodes().isEmpty()) {
                // nothing to plan, but a node may have shrunk under its jobs (its reason, metric and alert
                // should not wait for new work) or a quarantined one may have been mended
                recheckQuarantine(now, state);
                forecasts.clear(now);
                return Uni.createFrom().item(0);
            }
            Map<String, String> modelByNode = modelByNode(state);
            // the jobs the disruption budget lets the solver move now (none read when no running job asks to be movable)
            Planner windowPlanner = burst ? Planners.greedyWhenAllFit(planner, arrivals) : planner;
            return movable(now, state).chain(planned -> vertx.executeBlocking(Uni.createFrom().item(() -> decide(now, planned,
                            planned.waiting(), windowPlanner, profile.withTimeLimit(budget.solveLimit(start, System.nanoTime())), ""))))
                    .chain(decision -> {
                        long solved = decision.solvedAt();
                        mark[0] = phase("plan", mark[0], steps);
                        if (decision.plan() != null && decision.plan().metadata().containsKey(GreedyWhenAllFit.ALL_FIT)) {
                            metrics.burstPlacedWithoutSolve();
                        }
                        Uni<Integer> applied = decision.plan() == null ? Uni.createFrom().item(0)
                                : binder.apply(decision.plan(), modelByNode).call(placed -> metrics.observeBound(decision.plan()))
                                        .call(placed -> waits.recordBound(decision.plan()));
                        return applied.invoke(placed -> {
                            mark[0] = phase("bind", mark[0], steps);
                            budget.afterSolveTook(mark[0] - solved);
                            if (metrics.observeWindow(decision, mark[0] - start)) {
                                Plan plan = decision.plan();
                                LOG.infof("window took %d ms, over the limit + 20%%: %s; the planner said %d ms; %d placed, %d preempted",
                                        (mark[0] - start) / 1_000_000, String.join(", ", steps), plan == null ? -1 : plan.solveMillis(),
                                        plan == null ? 0 : plan.placements().size(), plan == null ? 0 : plan.preemptions().size());
                            }
                            if (placed > 0) {
                                LOG.infof("window: %d of %d pending jobs placed", placed, state.waiting().size());
                            }
                            recordReasonsInBackground(decision);
                            forecastInBackground(decision, state);
                        });
                    });
        });
    }

    /**
     * Recomputes the start-time forecast from this window's scenario and plan on a worker thread,
     * beside the next window: it is news for users, not part of the decision.
     */
    private void forecastInBackground(Decision decision, State state) {
        if (decision.scenario() == null || !forecasting.compareAndSet(false, true)) {
            return;
        }
        if (!forecasts.due()) {
            forecasting.set(false);
            return;
        }
        var ends = history.current().ends(state.placed(), decision.scenario().nowSeconds());
        vertx.executeBlocking(Uni.createFrom().item(() -> {
            forecasts.recompute(decision.scenario(), decision.plan(), ends);
            return true;
        })).eventually(() -> forecasting.set(false)).subscribe().with(ignored -> {
        }, e -> LOG.warnf("start-time forecast failed (the next window tries again): %s", e.toString()));
    }

    /** The state with the running jobs the disruption budget lets the solver move marked movable. */
    private Uni<State> movable(Instant now, State state) {
        if (!moves.enabled() || state.placed().stream().noneMatch(p -> p.spec() != null && p.spec().migratable())) {
            return Uni.createFrom().item(state);
        }
        return moves.spent(now).map(spent -> new State(state.nodes(), moves.offer(now, state.placed(), spent), state.held(),
                state.waiting(), state.shares()));
    }

    /** With nothing to plan: which nodes are still inconsistent (as {@link #decide} would find them). */
    private void recheckQuarantine(Instant now, State state) {
        List<Object> checked = List.of(state.nodes(), state.placed(), state.held());
        if (!quarantine.any() && checked.equals(lastConsistent)) {
            return; // nothing changed since it was found consistent: an idle window costs a comparison
        }
        lastConsistent = null;
        Scenario scenario = ScenarioBuilder.build(now, state.nodes(), state.placed(), state.held(), List.of(), state.shares());
        List<Violation> violations = ScenarioValidator.validate(scenario).stream()
                .filter(v -> !v.field().startsWith("queues")).toList();
        if (violations.isEmpty()) {
            quarantine.update(Map.of(), now);
            lastConsistent = checked;
            return;
        }
        NodeQuarantine.blame(scenario, violations)
                .ifPresent(blamed -> quarantine.update(NodeQuarantine.without(state, blamed).reasons(), now));
    }

    /** {@link #phase(String, long)}, and the step's time added to {@code steps}. */
    private long phase(String name, long since, List<String> steps) {
        long now = phase(name, since);
        steps.add(name + " " + (now - since) / 1_000_000 + " ms");
        return now;
    }

    /** Records the window step that began at {@code since} and ended now; returns now. */
    private long phase(String name, long since) {
        long now = System.nanoTime();
        metrics.observePhase(name, now - since);
        return now;
    }

    /**
     * The fast path: a job that just arrived is placed at once, without waiting for the window,
     * when it fits now without disturbing anyone and nothing of higher priority waits for such GPUs.
     * It plans the job together with the jobs ahead of it in line (higher priority, or as high and
     * submitted earlier) with the greedy planner (no preemption, no migration, first in line first);
     * the job is bound only if it was placed there and no job of higher priority was left waiting
     * that could use the GPU model it takes. A job that arrives while a window (or another
     * fast path) plans has its fast path run as soon as that is done. The item says whether the job
     * was bound now.
     */
    public Uni<Boolean> fastPath(UUID jobId, long receivedNanos) {
        if (!fastPathEnabled || !leadership.leading()) {
            return Uni.createFrom().item(false);
        }
        boolean burst = recentArrivals.record(System.nanoTime()) > FAST_PATH_BACKLOG;
        if (burst || burstWindowDue.get()) { // one window plans the burst in about the time one fast path takes
            LOG.debugf("job %s arrived in a burst: a window plans it", jobId);
            burstWindowSoon();
            return Uni.createFrom().item(false);
        }
        if (!planning.compareAndSet(false, true)) {
            deferred.add(new Deferred(jobId, receivedNanos));
            return Uni.createFrom().item(false);
        }
        Instant now = Instant.now();
        long[] mark = {System.nanoTime()};
        return Panache.withSession(stateCache::read).chain(state -> {
            mark[0] = phase("fastpath-read", mark[0]);
            ScenarioBuilder.Waiting job = state.waiting().stream().filter(w -> w.jobId().equals(jobId)).findFirst().orElse(null);
            if (job == null || state.nodes().isEmpty()) {
                return Uni.createFrom().item(false);
            }
            List<ScenarioBuilder.Waiting> inLine = new ArrayList<>();
            for (ScenarioBuilder.Waiting w : state.waiting()) {
                // a job ahead that cannot use any GPU model this one can is no rival for its GPUs: leaving it out
                // spares the greedy pass hundreds of hopeless tries when a long line waits for another model
                if (w == job || aheadOf(w.spec(), job.spec()) && mayShareModel(w.spec(), job.spec())) {
                    inLine.add(w);
                }
            }
            return vertx.executeBlocking(Uni.createFrom().item(() -> decide(now, state, inLine, Planners.fastPath(arrivals), profile, "fastpath-")))
                    .chain(decision -> {
                        mark[0] = phase("fastpath-plan", mark[0]);
                        Placement mine = decision.plan() == null ? null : decision.plan().placements().stream()
                                .filter(p -> p.job().equals(jobId.toString())).findFirst().orElse(null);
                        if (mine == null) {
                            return Uni.createFrom().item(false);
                        }
                        String blocker = higherPriorityWaiter(job, mine, inLine, decision.plan(), modelByNode(state));
                        if (blocker != null) {
                            LOG.debugf("job %s left to the window: job %s of higher priority waits for such GPUs", jobId, blocker);
                            return Uni.createFrom().item(false);
                        }
                        Plan only = new Plan(Plan.FORMAT, "fast-path", List.of(mine), List.of(), List.of(), List.of(),
                                decision.plan().solveMillis(), Map.of("planner", "greedy", "fastPath", "true"));
                        return binder.apply(only, modelByNode(state))
                                .invoke(placed -> {
                                    // bound (committed) now: the wait in the queue is counted after this
                                    phase("fastpath-bind", mark[0]);
                                    if (placed > 0) {
                                        metrics.observeFastPath(System.nanoTime() - receivedNanos);
                                        LOG.infof("fast path: job %s placed without waiting for the window", jobId);
                                    }
                                })
                                .call(placed -> metrics.observeBound(only))
                                .call(placed -> waits.recordBound(only))
                                .map(placed -> placed > 0);
                    });
        }).eventually(this::donePlanning);
    }

    /**
     * A consolidation pass ({@link ScheduledConsolidation}): with windows and fast paths held off,
     * reads the cluster, lets the disruption budget say which running jobs may move, asks the
     * engine's {@link Consolidation} for the moves that make room for one of {@code shapes} (its
     * pending jobs aside), and hands them to the binder, which records and carries them out as any
     * window's moves. The item is null when a window or fast path is planning (the next pass tries
     * again), else what the pass found and how many moves the binder recorded.
     */
    public Uni<Consolidated> consolidate(Instant now, List<dev.gantry.placement.engine.domain.PendingJob> shapes, int maxMoves,
            java.time.Duration limit) {
        if (!leadership.leading() || !planning.compareAndSet(false, true)) {
            return Uni.createFrom().nullItem();
        }
        return Panache.withSession(stateCache::read).chain(read -> movable(now, read)).chain(state -> vertx.executeBlocking(
                        Uni.createFrom().item(() -> {
                            Scenario scenario = ScenarioBuilder.build(now, state.nodes(), state.placed(), state.held(), List.of(), state.shares());
                            if (ScenarioValidator.validate(scenario).stream().anyMatch(v -> v.field().startsWith("queues"))) {
                                scenario = ScenarioBuilder.build(now, state.nodes(), state.placed(), state.held(), List.of(), List.of());
                            }
                            List<Violation> violations = ScenarioValidator.validate(scenario);
                            if (!violations.isEmpty()) {
                                return new Consolidation.Outcome(new Plan(Plan.FORMAT, scenario.name(), List.of(), List.of(), List.of(),
                                        List.of(), 0, Map.of()), null, "the cluster's state is refused by the engine: " + violations.getFirst());
                            }
                            return Consolidation.plan(scenario, shapes, planner, profile.withTimeLimit(limit), maxMoves);
                        }))
                .chain(outcome -> !outcome.moves() ? Uni.createFrom().item(new Consolidated(outcome, 0))
                        : binder.move(outcome.plan()).map(recorded -> new Consolidated(outcome, recorded))))
                .eventually(this::donePlanning);
    }

    /** A consolidation pass's answer, and how many of its moves the binder recorded (all or none). */
    public record Consolidated(Consolidation.Outcome outcome, int recorded) {
    }

    /**
     * Counts a job that just arrived in the workload the planners keep room for, so that shapes
     * which stop waiting (they ran, or were cancelled) are still kept in mind. In memory: a
     * restarted replica uses each window's own workload until enough jobs have arrived again.
     */
    public void recordArrival(JobQueued job) {
        try {
            arrivals.record(ScenarioBuilder.pending(job.jobId(), job));
        } catch (RuntimeException e) {
            LOG.debugf("job %s not counted in the workload mix: %s", job.jobId(), e.getMessage()); // the window refuses it with reasons
        }
    }

    /**
     * Starts the job's fast path without waiting for it: the caller (the signal that a replica stored
     * the job, {@code QueuedJobSignal}) goes on at once, so a cancel is never queued behind a
     * placement and a burst of arrivals piles up where {@link #donePlanning} sees it. Runs on a fresh duplicated context, as a request
     * would: it opens its own database session.
     */
    public void offerFastPath(UUID jobId, long receivedNanos) {
        if (!fastPathEnabled) {
            return;
        }
        inOwnContext(() -> fastPath(jobId, receivedNanos).subscribe().with(placed -> {
        }, e -> LOG.warnf("fast path for job %s failed (the window will plan it): %s", jobId, e.toString())));
    }

    private void inOwnContext(Runnable action) {
        io.vertx.core.Context context = VertxContext.createNewDuplicatedContext(vertx.getDelegate().getOrCreateContext());
        // a fresh duplicated context belongs to this action alone: Panache may open its session on it
        VertxContextSafetyToggle.setContextSafe(context, true);
        context.runOnContext(ignored -> action.run());
    }

    /**
     * Lets the next window or fast path plan, and starts the fast path of a job that arrived
     * meanwhile. A burst (more than {@link #FAST_PATH_BACKLOG} jobs waiting for their fast path, or
     * arrived within the last second) goes to a window at once instead: one window plans them all in about the time one fast path
     * takes, and fast paths one after another would keep the scheduled windows out.
     */
    private void donePlanning() {
        planning.set(false);
        if (burstWindowReady.get()) {
            startBurstWindow();
            return;
        }
        if (!deferred.isEmpty() && (deferred.size() > FAST_PATH_BACKLOG || recentArrivals.count(System.nanoTime()) > FAST_PATH_BACKLOG)) {
            LOG.debugf("%d jobs arrived while planning: a window plans them together", deferred.size());
            burstWindowSoon();
            return;
        }
        Deferred next = deferred.poll();
        if (next != null) {
            inOwnContext(() -> fastPath(next.jobId(), next.receivedNanos()).subscribe().with(placed -> {
            }, e -> LOG.warnf("deferred fast path for job %s failed (the window will plan it): %s", next.jobId(), e.toString())));
        }
    }

    /**
     * Sets a burst window for {@link #burstGapNanos} after the last one started (at once if that has
     * passed); a window already due plans these arrivals too.
     */
    private void burstWindowSoon() {
        if (!burstWindowDue.compareAndSet(false, true)) {
            return;
        }
        long waitMillis = Math.max(1, (lastBurstWindowNanos + burstGapNanos - System.nanoTime()) / 1_000_000);
        vertx.setTimer(waitMillis, id -> {
            burstWindowReady.set(true);
            startBurstWindow();
        });
    }

    /** The due burst window, if nothing else plans now (otherwise {@link #donePlanning} starts it). */
    private void startBurstWindow() {
        if (!planning.compareAndSet(false, true)) {
            return;
        }
        burstWindowReady.set(false);
        burstWindowDue.set(false);
        deferred.clear(); // the window plans every waiting job, these among them
        if (!leadership.leading()) {
            planning.set(false);
            return;
        }
        lastBurstWindowNanos = System.nanoTime();
        inOwnContext(() -> windowBody(true).eventually(this::donePlanning).subscribe().with(placed -> {
            if (placed > 0) {
                LOG.debugf("burst window: %d jobs placed", placed);
            }
        }, e -> LOG.warnf("window for a burst failed (the next window will plan its jobs): %s", e.toString())));
    }

    /**
     * A job of higher priority than {@code job} that the greedy plan leaves waiting and that could run
     * on the GPU model {@code mine} would take (so the window might free GPUs for it there), or null.
     */
    static String higherPriorityWaiter(ScenarioBuilder.Waiting job, Placement mine, List<ScenarioBuilder.Waiting> inLine, Plan plan,
            Map<String, String> modelByNode) {
        Set<String> modelsTaken = new HashSet<>();
        mine.tasks().forEach(t -> modelsTaken.add(modelByNode.get(t.node())));
        Set<String> unplaced = new HashSet<>();
        plan.unplaced().forEach(u -> unplaced.add(u.job()));
        for (ScenarioBuilder.Waiting w : inLine) {
            if (w.spec().priority() <= job.spec().priority() || !unplaced.contains(w.jobId().toString())) {
                continue;
            }
            List<String> wanted = w.spec().gpuModels();
            if (wanted == null || wanted.isEmpty() || wanted.stream().anyMatch(modelsTaken::contains)) {
                return w.jobId().toString();
            }
        }
        return null;
    }

    /**
     * {@code gantry.placement.move-cost.per-move} and {@code .per-gpu} over the profile's own (the
     * soft score a move of a running job costs); a negative amount is refused at start, naming the key.
     */
    static MoveCost moveCost(MoveCost profiles, Optional<Long> perMove, Optional<Long> perGpu) {
        if (perMove.orElse(0L) < 0) {
            throw new IllegalArgumentException("gantry.placement.move-cost.per-move must be 0 or more, got " + perMove.get());
        }
        if (perGpu.orElse(0L) < 0) {
            throw new IllegalArgumentException("gantry.placement.move-cost.per-gpu must be 0 or more, got " + perGpu.get());
        }
        return new MoveCost(perMove.orElse(profiles.perMove()), perGpu.orElse(profiles.perGpu()));
    }

    /** The solver profile every window plans with (its full limit; the window's own budget shortens it). */
    /** The solver profile the windows plan with, from the {@code gantry.placement.*} keys. */
    static SolverProfile profile(String profileName, Optional<String> weights, Optional<String> gpuSpeeds, Optional<Long> moveCostPerMove,
            Optional<Long> moveCostPerGpu, boolean reclaimTowardFairShare) {
        return SolverProfile.byName(profileName).withWeightOverrides(weightOverrides(weights.orElse("")))
                .withGpuSpeeds(gpuSpeeds(gpuSpeeds.orElse("")))
                .withMoveCost(moveCost(SolverProfile.byName(profileName).moveCost(), moveCostPerMove, moveCostPerGpu))
                .withReclaimTowardFairShare(reclaimTowardFairShare);
    }

    SolverProfile profile() {
        return profile;
    }

    /**
     * {@code gantry.placement.reclaim.fair-share-trees}: the root queues whose trees reclaim toward their
     * fair share when {@code toward-fair-share} is on (unset or empty: every tree).
     */
    static Set<String> fairShareTrees(Optional<List<String>> roots) {
        return roots.map(list -> list.stream().map(String::strip).filter(root -> !root.isEmpty())
                .collect(java.util.stream.Collectors.toSet())).orElse(Set.of());
    }

    /** {@code gantry.placement.gpu-speeds}: the engine's table with these entries over it, or {@code none}; refused at start when malformed. */
    static GpuSpeeds gpuSpeeds(String spec) {
        try {
            return GpuSpeeds.parse(spec);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("gantry.placement.gpu-speeds: " + e.getMessage(), e);
        }
    }

    /**
     * {@code gantry.placement.weights}: {@code Constraint name=weight} pairs separated by commas, for
     * the engine's medium and soft constraints, e.g. {@code Fragmentation=5,Fair share deviation=2}.
     */
    static Map<String, Long> weightOverrides(String text) {
        Map<String, Long> weights = new java.util.LinkedHashMap<>();
        for (String pair : text.split(",")) {
            if (pair.isBlank()) {
                continue;
            }
            int eq = pair.lastIndexOf('=');
            if (eq <= 0) {
                throw new IllegalArgumentException("gantry.placement.weights: expected Constraint name=weight, got \"" + pair.trim() + "\"");
            }
            try {
                weights.put(pair.substring(0, eq).trim(), Long.parseLong(pair.substring(eq + 1).trim()));
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("gantry.placement.weights: weight of \"" + pair.substring(0, eq).trim()
                        + "\" is not a whole number: " + pair.substring(eq + 1).trim());
            }
        }
        return weights;
    }

    /** Whether two jobs could run on the same GPU model: either takes any model, or their lists meet. */
    static boolean mayShareModel(JobQueued a, JobQueued b) {
        List<String> x = a.gpuModels();
        List<String> y = b.gpuModels();
        return x == null || x.isEmpty() || y == null || y.isEmpty() || x.stream().anyMatch(y::contains);
    }

    /** Whether {@code other} is ahead of {@code job} in line: higher priority, or as high and submitted earlier. */
    static boolean aheadOf(JobQueued other, JobQueued job) {
        if (other.priority() != job.priority()) {
            return other.priority() > job.priority();
        }
        return other.submittedAt() != null && job.submittedAt() != null && other.submittedAt().isBefore(job.submittedAt());
    }

    private static Map<String, String> modelByNode(State state) {
        Map<String, String> modelByNode = new HashMap<>();
        state.nodes().forEach(n -> modelByNode.put(n.name(), n.gpuModel()));
        return modelByNode;
    }

    /**
     * Tells admission why each job still waits: the reason of every job the plan left unplaced (or the
     * engine refused) is stored with the pending job, and {@code placements.pending} goes out in the
     * same transaction when it differs from the one stored, so admission sees each change once.
     * Written after the window, beside the next one: reasons are news for admission, not part of the
     * decision, and with many jobs waiting their writes took as long as the solve. Which reasons
     * changed is found here, while the state cache is still this window's alone.
     */
    private void recordReasonsInBackground(Decision decision) {
        Map<UUID, String> changed = changedReasons(decision);
        if (changed.isEmpty() || !writingReasons.compareAndSet(false, true)) {
            return; // still writing the last ones: the next window finds these changed again
        }
        long start = System.nanoTime();
        inOwnContext(() -> writeReasons(changed).eventually(() -> {
            writingReasons.set(false);
            metrics.observePhase("reasons", System.nanoTime() - start);
        }).subscribe().with(ignored -> {
        }, e -> LOG.warnf("pending reasons not recorded (the next window tries again): %s", e.toString())));
    }

    /** The reasons of this decision that differ from those the jobs were last given (most stay the same window after window). */
    private Map<UUID, String> changedReasons(Decision decision) {
        Map<UUID, String> reasons = new HashMap<>(decision.refused());
        if (decision.plan() != null) {
            decision.plan().unplaced().forEach(u -> reasons.put(UUID.fromString(u.job()), u.reason()));
        }
        reasons.entrySet().removeIf(e -> e.getValue().equals(stateCache.reasonOf(e.getKey())));
        return reasons;
    }

    /** Stores the reasons (checked again against each row) and sends {@code placements.pending} for each change. */
    private Uni<Void> writeReasons(Map<UUID, String> reasons) {
        if (reasons.isEmpty()) {
            return Uni.createFrom().voidItem();
        }
        Instant now = Instant.now();
        return Panache.withTransaction(() -> PendingJob.<PendingJob>list("jobId in ?1", reasons.keySet()).chain(rows -> {
            Uni<Void> chain = Uni.createFrom().voidItem();
            for (PendingJob row : rows) {
                String reason = reasons.get(row.jobId);
                if (reason == null || reason.equals(row.reason)) {
                    continue;
                }
                row.reason = reason;
                row.reasonAt = now;
                chain = chain.chain(() -> outbox.append(Subjects.PLACEMENTS_PENDING, row.jobId.toString(),
                        new PlacementPending(row.jobId, row.queue, reason, now)).replaceWithVoid());
            }
            return chain;
        })).onFailure().recoverWithItem(e -> {
            LOG.warnf("pending reasons not recorded this window (next window retries): %s", e.toString());
            return null;
        });
    }

    /**
     * Builds the scenario of {@code candidates} (pending jobs in line), plans and validates. The
     * decision's plan is null when there is nothing valid to apply; jobs the engine refuses to plan
     * are named with why, so their owners learn it. {@code step} prefixes the timings of building
     * and checking ("" for a window, "fastpath-").
     */
    Decision decide(Instant now, State state, List<ScenarioBuilder.Waiting> candidates, Planner planner, SolverProfile profile,
            String step) {
        long buildStart = System.nanoTime();
        Map<UUID, String> refused = new HashMap<>();
        List<ScenarioBuilder.Waiting> waiting = new ArrayList<>();
        for (ScenarioBuilder.Waiting w : candidates) {
            try {
                ScenarioBuilder.pending(w.jobId(), w.spec());
                waiting.add(w);
            } catch (RuntimeException e) {
                refused.put(w.jobId(), "cannot be planned: " + e.getMessage());
                LOG.warnf("pending job %s cannot be planned, left out: %s", w.jobId(), e.getMessage());
            }
        }
        List<QuotaShares.QueueShare> shares = state.shares();
        Scenario scenario = ScenarioBuilder.build(now, state.nodes(), state.placed(), state.held(), waiting, shares);
        List<Violation> violations = ScenarioValidator.validate(scenario);
        if (!shares.isEmpty() && violations.stream().anyMatch(v -> v.field().startsWith("queues"))) {
            LOG.warnf("queue tree of the quota shares refused by the engine, this window plans with unbounded queues: %s", violations);
            shares = List.of();
            scenario = ScenarioBuilder.build(now, state.nodes(), state.placed(), state.held(), waiting, shares);
            violations = ScenarioValidator.validate(scenario);
        }
        Map<String, String> quarantinedNow = Map.of();
        if (!violations.isEmpty()) {
            // a pending job the engine refuses waits out of the window; an inconsistent node is
            // quarantined with the jobs on it (NodeQuarantine); anything else skips the window
            Set<Integer> badPending = new HashSet<>();
            List<Violation> others = new ArrayList<>();
            for (Violation v : violations) {
                Matcher m = PENDING_FIELD.matcher(v.field());
                if (m.find()) {
                    int index = Integer.parseInt(m.group(1));
                    badPending.add(index);
                    refused.put(waiting.get(index).jobId(), "cannot be planned: " + v.field().replaceFirst("^pending\\[\\d+]\\.?", "")
                            + " " + v.message());
                    LOG.warnf("pending job %s left out of the window: %s: %s", scenario.pending().get(index).name(), v.field(), v.message());
                } else {
                    others.add(v);
                }
            }
            if (!others.isEmpty()) {
                Optional<Map<String, String>> blamed = NodeQuarantine.blame(scenario, others);
                if (blamed.isEmpty()) {
                    LOG.errorf("scenario refused by the engine, window skipped: %s", violations);
                    return new Decision(scenario, null, Map.of());
                }
                NodeQuarantine.Result without = NodeQuarantine.without(state, blamed.get());
                state = without.state();
                quarantinedNow = without.reasons();
            }
            List<ScenarioBuilder.Waiting> kept = new ArrayList<>();
            for (int i = 0; i < waiting.size(); i++) {
                if (!badPending.contains(i)) {
                    kept.add(waiting.get(i));
                }
            }
            scenario = ScenarioBuilder.build(now, state.nodes(), state.placed(), state.held(), kept, shares);
            quarantine.update(quarantinedNow, now);
            if (!quarantinedNow.isEmpty()) {
                List<Violation> still = ScenarioValidator.validate(scenario);
                if (!still.isEmpty()) {
                    LOG.errorf("scenario refused by the engine even without the quarantined nodes %s, window skipped: %s",
                            quarantinedNow.keySet(), still);
                    return new Decision(scenario, null, refused);
                }
            }
            if (kept.isEmpty()) {
                return new Decision(scenario, null, refused);
            }
        } else {
            quarantine.update(quarantinedNow, now);
        }
        // the reservations: runtime estimates of the waiting jobs in the scenario, estimated ends of the running ones
        RuntimeEstimates estimates = history.current();
        scenario = estimates.withEstimates(scenario, waiting);
        Planner composed = Planners.window(planner, estimates.ends(state.placed(), scenario.nowSeconds()), reservations,
                reservationsPerQueue);
        long solveStart = System.nanoTime();
        metrics.observePhase(step + "build", solveStart - buildStart);
        // a move stops and restarts a job: only those that make room for this plan's placements are carried out
        Plan plan = MovesThatMakeRoom.keep(scenario, composed.plan(scenario, profile));
        if (plan.metadata().containsKey("movesDropped")) {
            LOG.debugf("%s%s", step, plan.metadata().get("movesDropped"));
        }
        if (plan.metadata().containsKey("reservation")) {
            LOG.debugf("%sreservation %s (%s reserved GPUs free now, %s jobs started in them)", step, plan.metadata().get("reservation"),
                    plan.metadata().get("reservedGpusFreeNow"), plan.metadata().get("startedInReservation"));
        }
        long solvedAt = System.nanoTime();
        metrics.observeSolve(solvedAt - solveStart);
        List<String> problems = PlanValidator.validate(scenario, plan);
        metrics.observePhase(step + "check", System.nanoTime() - solvedAt);
        if (!problems.isEmpty()) {
            metrics.planRejected();
            LOG.errorf("plan of %s refused by the validator, not applied: %s", planner.name(), problems);
            return new Decision(scenario, null, refused);
        }
        return new Decision(scenario, plan, refused, solvedAt);
    }
}
