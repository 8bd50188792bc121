package dev.gantry.placement.window;

import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.scheduler.Scheduled;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZonedDateTime;
import java.util.List;
import java.util.UUID;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.jboss.logging.Logger;

/**
 * Scheduled consolidation (issue 23, item 4; off by default, {@code gantry.placement.consolidation.*}):
 * every {@code every}, at the configured hours of the day, a pass moves running migratable work so
 * that whole nodes and NVLink islands are free for the gang shapes that waited longest
 * ({@link GangWaits}), ahead of their next arrival. Within the disruption budget: only the jobs
 * {@link DisruptionBudget} lets move now are offered, at most {@code max-moves} per pass and no
 * more than the hour has left, and the moves are recorded and carried out by the binder's migration
 * path (all or none, each step in the job's history). One shape's room per pass.
 */
@ApplicationScoped
public class ScheduledConsolidation {

    private static final Logger LOG = Logger.getLogger(ScheduledConsolidation.class);

    /** What a pass did: {@code moves} jobs told to move (0 when nothing moved), and why. */
    public record Pass(int moves, String reason) {
    }

    private final WindowLoop windows;
    private final DisruptionBudget budget;
    private final GangWaits waits;
    private final MeterRegistry registry;
    private final boolean enabled;
    private final ConsolidationHours hours;
    private final ZoneId zone;
    private final int maxMoves;
    private final int shapes;
    private final Duration lookback;
    private final Duration timeLimit;

    public ScheduledConsolidation(WindowLoop windows, DisruptionBudget budget, GangWaits waits, MeterRegistry registry,
            @ConfigProperty(name = "gantry.placement.consolidation.enabled", defaultValue = "false") boolean enabled,
            @ConfigProperty(name = "gantry.placement.consolidation.hours", defaultValue = "01:00-05:00") String hours,
            @ConfigProperty(name = "gantry.placement.consolidation.zone", defaultValue = "UTC") String zone,
            @ConfigProperty(name = "gantry.placement.consolidation.max-moves", defaultValue = "4") int maxMoves,
            @ConfigProperty(name = "gantry.placement.consolidation.shapes", defaultValue = "3") int shapes,
            @ConfigProperty(name = "gantry.placement.consolidation.lookback", defaultValue = "7d") Duration lookback,
            @ConfigProperty(name = "gantry.placement.consolidation.time-limit", defaultValue = "2s") Duration timeLimit) {
        if (maxMoves < 1 || shapes < 1) {
            throw new IllegalArgumentException("gantry.placement.consolidation.max-moves and .shapes must be 1 or more");
        }
        if (timeLimit.isNegative() || timeLimit.isZero()) {
            throw new IllegalArgumentException("gantry.placement.consolidation.time-limit must be positive, got " + timeLimit);
        }
        this.windows = windows;
        this.budget = budget;
        this.waits = waits;
        this.registry = registry;
        this.enabled = enabled;
        this.hours = ConsolidationHours.parse(hours);
        try {
            this.zone = ZoneId.of(zone);
        } catch (RuntimeException e) {
            throw new IllegalArgumentException("gantry.placement.consolidation.zone: unknown time zone " + zone, e);
        }
        this.maxMoves = maxMoves;
        this.shapes = shapes;
        this.lookback = lookback;
        this.timeLimit = timeLimit;
    }

    @Scheduled(every = "${gantry.placement.consolidation.every:10m}", delayed = "${gantry.placement.consolidation.every:10m}",
            concurrentExecution = Scheduled.ConcurrentExecution.SKIP, skipExecutionIf = Scheduled.ApplicationNotRunning.class)
    Uni<Void> scheduled() {
        if (!enabled) {
            return Uni.createFrom().voidItem();
        }
        return run(Instant.now()).onFailure().recoverWithItem(e -> {
            LOG.errorf(e, "consolidation pass failed");
            return null;
        }).replaceWithVoid();
    }

    /** A pass now, at the configured hours only. */
    public Uni<Pass> run(Instant now) {
        return run(now, now.atZone(zone));
    }

    /** A pass at {@code now}, as if the clock in the configured zone said {@code wallClock} (the hours are checked against it). */
    Uni<Pass> run(Instant now, ZonedDateTime wallClock) {
        if (!hours.contains(wallClock.withZoneSameInstant(zone).toLocalTime())) {
            return done(new Pass(0, "outside the consolidation hours " + hours + " (" + zone + ")"), "outside-hours");
        }
        return budget.spent(now).chain(spent -> {
            int left = Math.min(maxMoves, budget.movesLeft(spent));
            if (left <= 0) {
                return done(new Pass(0, "the disruption budget allows no move now (" + spent.total() + " moves within the hour)"),
                        "budget-spent");
            }
            return waits.longest(now, lookback, shapes).chain(ranked -> {
                if (ranked.isEmpty()) {
                    return done(new Pass(0, "no gang of 2 or more GPUs per pod waited within " + lookback), "nothing");
                }
                var standIns = ranked.stream().map(w -> ScenarioBuilder.pending(UUID.randomUUID(), w.example())).toList();
                return windows.consolidate(now, standIns, left, timeLimit).chain(result -> {
                    if (result == null) {
                        return done(new Pass(0, "a window was planning; the next pass tries again"), "busy");
                    }
                    int planned = result.outcome().plan().migrations().size();
                    if (planned > 0 && result.recorded() == 0) {
                        // the binder checks the budget again against the moves it records: a queue's hour may be spent
                        return done(new Pass(0, result.outcome().reason() + "; not recorded: the disruption budget refused them (see the log)"),
                                "budget-spent");
                    }
                    return done(new Pass(result.recorded(), result.outcome().reason()), result.recorded() > 0 ? "moved" : "nothing");
                });
            });
        });
    }

    private Uni<Pass> done(Pass pass, String outcome) {
        registry.counter("gantry.placement.consolidation.passes", "outcome", outcome).increment();
        if (pass.moves() > 0) {
            LOG.infof("consolidation: %d job(s) told to move: %s", pass.moves(), pass.reason());
        } else {
            LOG.debugf("consolidation: nothing moved: %s", pass.reason());
        }
        return Uni.createFrom().item(pass);
    }
}
