package dev.gantry.placement.window;

import dev.gantry.contracts.events.EventCodec;
import dev.gantry.contracts.jobs.JobQueued;
import dev.gantry.contracts.nodes.NodeInfo;
import dev.gantry.contracts.quota.QuotaShares;
import dev.gantry.placement.engine.domain.Plan;
import dev.gantry.placement.engine.domain.Scenario;
import dev.gantry.placement.engine.json.Violation;
import dev.gantry.placement.engine.planner.Planner;
import dev.gantry.placement.engine.planner.Planners;
import dev.gantry.placement.engine.planner.SolverProfile;
import dev.gantry.placement.engine.validation.PlanValidator;
import dev.gantry.placement.engine.validation.ScenarioValidator;
import dev.gantry.placement.persistence.Allocation;
import dev.gantry.placement.persistence.NodeRecord;
import dev.gantry.placement.persistence.PendingJob;
import dev.gantry.placement.persistence.QuotaSharesRecord;
import dev.gantry.placement.persistence.RunningJobRecord;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.quarkus.hibernate.reactive.panache.Panache;
import io.quarkus.scheduler.Scheduled;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.core.Vertx;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.jboss.logging.Logger;

/**
 * The scheduling window: every {@code gantry.placement.window} it reads nodes, running jobs
 * (allocations), pending jobs and the latest quota shares from the database, builds one immutable engine scenario, plans it
 * off the event loop with the configured planner and profile, checks the plan with the engine's
 * {@link PlanValidator} (an invalid plan is logged, counted and dropped), and hands a valid one to
 * the {@link Binder}. Windows never overlap; nothing is planned while nothing waits.
 */
@ApplicationScoped
public class WindowLoop {

    private static final Logger LOG = Logger.getLogger(WindowLoop.class);
    private static final Pattern PENDING_FIELD = Pattern.compile("^pending\\[(\\d+)]");

    private final Binder binder;
    private final Vertx vertx;
    private final Planner planner;
    private final SolverProfile profile;
    private final Timer windowTimer;
    private final Counter jobsPlaced;
    private final Counter plansRejected;
    private final AtomicLong allocatedGpus = new AtomicLong();

    /** What one window reads from the database. */
    record State(List<NodeInfo> nodes, List<ScenarioBuilder.Placed> placed, List<ScenarioBuilder.Held> held,
            List<ScenarioBuilder.Waiting> waiting, List<QuotaShares.QueueShare> shares) {
    }

    public WindowLoop(Binder binder, Vertx vertx, MeterRegistry registry,
            @ConfigProperty(name = "gantry.placement.planner", defaultValue = "timefold") String plannerName,
            @ConfigProperty(name = "gantry.placement.profile", defaultValue = "fast") String profileName) {
        this.binder = binder;
        this.vertx = vertx;
        this.planner = Planners.byName(plannerName);
        this.profile = SolverProfile.byName(profileName);
        this.windowTimer = Timer.builder("gantry.placement.window").description("one scheduling window: read, plan, validate, bind")
                .register(registry);
        this.jobsPlaced = Counter.builder("gantry.placement.jobs.placed").description("jobs bound by the window loop")
                .register(registry);
        this.plansRejected = Counter.builder("gantry.placement.plans.rejected")
                .description("plans the validator refused (not applied)").register(registry);
        registry.gauge("gantry.placement.gpus.allocated", allocatedGpus);
    }

    @Scheduled(every = "${gantry.placement.window:2s}", concurrentExecution = Scheduled.ConcurrentExecution.SKIP,
            skipExecutionIf = Scheduled.ApplicationNotRunning.class)
    Uni<Void> window() {
        return runWindow().onFailure().recoverWithItem(e -> {
            LOG.errorf(e, "scheduling window failed");
            return 0;
        }).replaceWithVoid();
    }

    /** One window; the item is the number of jobs bound. */
    public Uni<Integer> runWindow() {
        long start = System.nanoTime();
        Instant now = Instant.now();
        return Panache.withSession(this::load).chain(state -> {
            allocatedGpus.set(state.held().stream().mapToLong(h -> h.gpus().size()).sum());
            if (state.waiting().isEmpty() || state.nodes().isEmpty()) {
                return Uni.createFrom().item(0);
            }
            Map<String, String> modelByNode = new HashMap<>();
            state.nodes().forEach(n -> modelByNode.put(n.name(), n.gpuModel()));
            // the solver is CPU-bound: it runs on a worker thread, the result comes back on this context
            return vertx.executeBlocking(Uni.createFrom().item(() -> decide(now, state)))
                    .chain(plan -> plan == null ? Uni.createFrom().item(0) : binder.apply(plan, modelByNode))
                    .invoke(placed -> {
                        jobsPlaced.increment(placed);
                        windowTimer.record(System.nanoTime() - start, TimeUnit.NANOSECONDS);
                        if (placed > 0) {
                            LOG.infof("window: %d of %d pending jobs placed", placed, state.waiting().size());
                        }
                    });
        });
    }

    private Uni<State> load() {
        return NodeRecord.<NodeRecord>list("removed = false order by name").chain(nodes ->
                RunningJobRecord.<RunningJobRecord>listAll().chain(running ->
                        Allocation.<Allocation>list("order by jobId, task").chain(allocations ->
                                PendingJob.<PendingJob>list("order by priority desc, submittedAt").chain(pending ->
                                        QuotaSharesRecord.<QuotaSharesRecord>findById(QuotaSharesRecord.ID).map(shares ->
                                                toState(nodes, running, allocations, pending, shares))))));
    }

    private static State toState(List<NodeRecord> nodes, List<RunningJobRecord> running, List<Allocation> allocations,
            List<PendingJob> pending, QuotaSharesRecord sharesRow) {
        List<QuotaShares.QueueShare> shares = List.of();
        if (sharesRow != null) {
            try {
                List<QuotaShares.QueueShare> queues = EventCodec.fromJson(sharesRow.shares, QuotaShares.class).queues();
                shares = queues == null ? List.of() : queues;
            } catch (RuntimeException e) {
                LOG.warnf("stored quota shares unreadable, queues unbounded: %s", e.getMessage());
            }
        }
        List<NodeInfo> infos = new ArrayList<>();
        for (NodeRecord n : nodes) {
            try {
                infos.add(EventCodec.fromJson(n.info, NodeInfo.class));
            } catch (RuntimeException e) {
                LOG.warnf("node %s: stored description unreadable, left out: %s", n.name, e.getMessage());
            }
        }
        List<ScenarioBuilder.Placed> placed = new ArrayList<>();
        for (RunningJobRecord r : running) {
            JobQueued spec = null;
            try {
                spec = EventCodec.fromJson(r.spec, JobQueued.class);
            } catch (RuntimeException e) {
                LOG.warnf("running job %s: stored spec unreadable: %s", r.jobId, e.getMessage());
            }
            placed.add(new ScenarioBuilder.Placed(r.jobId, r.queue, spec, r.boundAt));
        }
        List<ScenarioBuilder.Held> held = allocations.stream()
                .map(a -> new ScenarioBuilder.Held(a.jobId, a.task, a.node, Arrays.stream(a.gpuIndices).boxed().toList(),
                        a.gpuMilli, a.cpuMillis, a.memoryMiB))
                .toList();
        List<ScenarioBuilder.Waiting> waiting = new ArrayList<>();
        for (PendingJob p : pending) {
            try {
                waiting.add(new ScenarioBuilder.Waiting(p.jobId, EventCodec.fromJson(p.spec, JobQueued.class)));
            } catch (RuntimeException e) {
                LOG.warnf("pending job %s: stored spec unreadable, left out: %s", p.jobId, e.getMessage());
            }
        }
        return new State(infos, placed, held, waiting, shares);
    }

    /** Builds the scenario, plans and validates; null when there is nothing valid to apply. */
    Plan decide(Instant now, State state) {
        List<ScenarioBuilder.Waiting> waiting = new ArrayList<>();
        for (ScenarioBuilder.Waiting w : state.waiting()) {
            try {
                ScenarioBuilder.pending(w.jobId(), w.spec());
                waiting.add(w);
            } catch (RuntimeException e) {
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
        if (!violations.isEmpty()) {
            // a pending job the engine refuses waits out of the window; anything else skips the window
            Set<Integer> badPending = new HashSet<>();
            for (Violation v : violations) {
                Matcher m = PENDING_FIELD.matcher(v.field());
                if (m.find()) {
                    badPending.add(Integer.parseInt(m.group(1)));
                    LOG.warnf("pending job %s left out of the window: %s: %s",
                            scenario.pending().get(Integer.parseInt(m.group(1))).name(), v.field(), v.message());
                }
            }
            if (violations.stream().anyMatch(v -> !PENDING_FIELD.matcher(v.field()).find())) {
                LOG.errorf("scenario refused by the engine, window skipped: %s", violations);
                return null;
            }
            List<ScenarioBuilder.Waiting> kept = new ArrayList<>();
            for (int i = 0; i < waiting.size(); i++) {
                if (!badPending.contains(i)) {
                    kept.add(waiting.get(i));
                }
            }
            if (kept.isEmpty()) {
                return null;
            }
            scenario = ScenarioBuilder.build(now, state.nodes(), state.placed(), state.held(), kept, shares);
        }
        Plan plan = planner.plan(scenario, profile);
        List<String> problems = PlanValidator.validate(scenario, plan);
        if (!problems.isEmpty()) {
            plansRejected.increment();
            LOG.errorf("plan of %s refused by the validator, not applied: %s", planner.name(), problems);
            return null;
        }
        return plan;
    }
}
