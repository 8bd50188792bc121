package dev.gantry.placement.engine.forecast;

import dev.gantry.placement.engine.domain.Migration;
import dev.gantry.placement.engine.domain.PendingJob;
import dev.gantry.placement.engine.domain.Placement;
import dev.gantry.placement.engine.domain.Plan;
import dev.gantry.placement.engine.domain.Preemption;
import dev.gantry.placement.engine.domain.RunningJob;
import dev.gantry.placement.engine.domain.RunningTask;
import dev.gantry.placement.engine.domain.Scenario;
import dev.gantry.placement.engine.domain.TaskGroup;
import dev.gantry.placement.engine.domain.TaskPlacement;
import dev.gantry.placement.engine.packing.Aging;
import dev.gantry.placement.engine.packing.ClusterState;
import dev.gantry.placement.engine.packing.EasyBackfill;
import dev.gantry.placement.engine.packing.GangPacker;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.ToLongFunction;

/**
 * A start time for every waiting job (Slurm's {@code squeue --start}): a what-if of the coming
 * windows. From the scenario with the window's plan applied, it replays EASY backfilling
 * ({@link EasyBackfill}, the bookkeeping of the service's {@code ReservingPlanner}) forward in
 * time: at each estimated end of a running job (or of a job the replay started) the GPUs are
 * released and the jobs still waiting are offered again in aged priority order; a job the replay
 * starts at time t is forecast to start at t. The reservation's head starts when its reservation
 * does (EASY's guarantee when the estimates hold), so its forecast is the reservation.
 *
 * <p>Running jobs end at their estimated end (the caller's, as for the reservation); one that has
 * overrun it is taken to end a little later ({@link #overrunEnd}). A job started by the replay
 * ends after its {@code estimatedRuntimeSeconds}; without one it never frees its GPUs. What the
 * replay cannot know, it does not guess: jobs that arrive later, preemptions, nodes that come or
 * go; the service recomputes the forecast every window.
 *
 * <p>Bounded cost: only the first {@code maxJobs} jobs in line are forecast (the rest are
 * {@link StartForecast.Basis#UNKNOWN}), the replay stops at {@code horizonSeconds} past now and
 * after {@code maxSteps} release times.
 */
public final class StartForecaster {

    /** The note's words for a job further back in line than the forecaster looks. */
    static final String BEYOND_LINE = "more than %d jobs ahead of it in line";

    /** At most this many jobs are named as what a job waits for. */
    public static final int MAX_WAITS_FOR = 10;

    private final int maxJobs;
    private final long horizonSeconds;
    private final int maxSteps;
    private final int reservations;
    private final boolean perQueue;

    /**
     * @param maxJobs        how many jobs, first in line first, get a forecast
     * @param horizonSeconds how far ahead of now the replay looks
     * @param maxSteps       at most this many release times are replayed
     * @param reservations   as the window's {@code ReservingPlanner} (EASY: 1)
     */
    public StartForecaster(int maxJobs, long horizonSeconds, int maxSteps, int reservations) {
        this(maxJobs, horizonSeconds, maxSteps, reservations, false);
    }

    /** @param perQueue the window's reservations are made per queue ({@code ReservingPlanner}'s {@code perQueue}) */
    public StartForecaster(int maxJobs, long horizonSeconds, int maxSteps, int reservations, boolean perQueue) {
        this.perQueue = perQueue;
        if (maxJobs < 1 || horizonSeconds < 1 || maxSteps < 1 || reservations < 1) {
            throw new IllegalArgumentException("maxJobs, horizonSeconds, maxSteps and reservations must be at least 1");
        }
        this.maxJobs = maxJobs;
        this.horizonSeconds = horizonSeconds;
        this.maxSteps = maxSteps;
        this.reservations = reservations;
    }

    /**
     * When a running job that started at {@code startedAt} and was expected to end at {@code estimatedEnd}
     * is now expected to end: then, if that is still ahead; else (it overran) a tenth of its expected
     * runtime after now, at least a second, as the placement service's runtime estimates do.
     */
    public static long overrunEnd(long startedAt, long estimatedEnd, long now) {
        if (estimatedEnd == Long.MAX_VALUE || estimatedEnd > now) {
            return estimatedEnd;
        }
        return now + Math.max(1, (estimatedEnd - startedAt) / 10);
    }

    /** Whether the forecast is unknown only because the job is further back in line than {@code maxJobs}. */
    public boolean beyondLine(StartForecast f) {
        return f.note().equals("unknown: " + BEYOND_LINE.formatted(maxJobs));
    }

    /** Forecasts for every waiting job of {@code sc} left waiting by {@code plan} (null: no plan applied). */
    public Map<String, StartForecast> forecast(Scenario sc, Plan plan, ToLongFunction<String> estimatedEnd) {
        return forecast(sc, plan, estimatedEnd, null);
    }

    /**
     * As {@link #forecast(Scenario, Plan, ToLongFunction)}; the replay stops as soon as every job of
     * {@code wanted} (null: all) is forecast, the others still waiting then being unknown.
     */
    public Map<String, StartForecast> forecast(Scenario sc, Plan plan, ToLongFunction<String> estimatedEnd, Set<String> wanted) {
        long now = sc.nowSeconds();
        Map<String, RunningJob> running = new LinkedHashMap<>();
        Map<String, Long> ends = new HashMap<>();
        for (RunningJob r : sc.running()) {
            running.put(r.name(), r);
            ends.put(r.name(), overrunEnd(r.startedAtSeconds(), estimatedEnd.applyAsLong(r.name()), now));
        }
        List<PendingJob> waiting = new ArrayList<>(sc.pending());
        if (plan != null) {
            apply(plan, now, running, ends, waiting);
        }
        waiting.sort(Aging.order(now));
        Map<String, StartForecast> out = new LinkedHashMap<>();
        if (waiting.size() > maxJobs) {
            for (PendingJob p : waiting.subList(maxJobs, waiting.size())) {
                out.put(p.name(), StartForecast.unknown(p.name(), BEYOND_LINE.formatted(maxJobs)));
            }
            waiting = new ArrayList<>(waiting.subList(0, maxJobs));
        }
        Set<String> open = wanted == null ? null : new HashSet<>(wanted);
        if (open != null) {
            open.retainAll(waiting.stream().map(PendingJob::name).toList());
        }
        Map<String, Set<String>> releasedOn = new HashMap<>(); // "node/gpu" -> jobs that held it and ended in the replay
        // the heads' reservations as the window makes them now: job -> start
        Map<String, Long> reservedAtFirst = new HashMap<>();
        List<EasyBackfill.Reservation> lastReservations = List.of();
        long t = now;
        long horizon = now + horizonSeconds;
        String stopped = null;
        for (int step = 0; !waiting.isEmpty(); step++) {
            Scenario at = new Scenario(sc.format(), sc.name(), t, sc.nodes(), sc.queues(), List.copyOf(running.values()), waiting);
            EasyBackfill easy = new EasyBackfill(at, new GangPacker(sc.nodes()), job -> ends.getOrDefault(job, Long.MAX_VALUE), reservations,
                    perQueue);
            List<PendingJob> order = new ArrayList<>(waiting);
            order.sort(Aging.order(t));
            List<PendingJob> still = new ArrayList<>();
            for (PendingJob job : order) {
                int made = easy.reservations().size();
                if (easy.full(job.queue()) && wholeGpusNeeded(job) > freeWholeGpus(easy.state())) {
                    still.add(job); // every reservation made and too few GPUs free: it cannot start now (saves the packer's search)
                    continue;
                }
                // a head's reservation from the step before stays right while the estimates hold: no new search
                EasyBackfill.Reservation earlier = made < lastReservations.size() && (made == 0
                        || easy.reservations().get(made - 1).equals(lastReservations.get(made - 1))) ? lastReservations.get(made) : null;
                EasyBackfill.Outcome outcome = easy.offer(job, earlier);
                if (outcome != EasyBackfill.Outcome.STARTED) {
                    if (outcome == EasyBackfill.Outcome.RESERVED && step == 0) {
                        reservedAtFirst.put(job.name(), easy.reservations().getLast().start());
                    }
                    still.add(job);
                    continue;
                }
                List<GangPacker.Assigned> fit = easy.lastFit().tasks();
                List<String> waitsFor = waitsFor(easy.state(), fit, releasedOn, ends);
                // a head displaced later (per queue, an older job of another queue may take its GPUs when its own head starts) is not
                StartForecast.Basis basis = Long.valueOf(t).equals(reservedAtFirst.get(job.name())) ? StartForecast.Basis.RESERVATION
                        : step == 0 ? StartForecast.Basis.NOW : StartForecast.Basis.RELEASES;
                out.put(job.name(), new StartForecast(job.name(), t, basis, waitsFor, note(basis, waitsFor)));
                RunningJob started = asRunning(job, easy.state(), fit, t);
                running.put(job.name(), started);
                ends.put(job.name(), EasyBackfill.estimatedEnd(job, t));
                if (open != null) {
                    open.remove(job.name());
                }
            }
            waiting = still;
            lastReservations = easy.reservations();
            if (waiting.isEmpty() || open != null && open.isEmpty()) {
                break;
            }
            long next = Long.MAX_VALUE;
            for (long end : ends.values()) {
                if (end > t && end < next) {
                    next = end;
                }
            }
            if (next == Long.MAX_VALUE) {
                stopped = "no job it waits behind has a runtime estimate";
                break;
            }
            if (next > horizon) {
                stopped = "not within the " + hours(horizonSeconds) + " looked ahead";
                break;
            }
            if (step + 1 >= maxSteps) {
                stopped = "not within the next " + maxSteps + " job ends";
                break;
            }
            t = next;
            release(t, running, ends, releasedOn);
        }
        for (PendingJob p : waiting) {
            out.put(p.name(), StartForecast.unknown(p.name(), stopped == null ? "not forecast" : stopped));
        }
        return out;
    }

    /** Whole GPUs the job's smallest gang needs (0 for a job that shares GPUs: it is always offered). */
    private static int wholeGpusNeeded(PendingJob job) {
        int sum = 0;
        for (var g : job.taskGroups()) {
            if (g.gpuMilli() != null) {
                return 0;
            }
        }
        List<Integer> perPod = new ArrayList<>();
        job.taskGroups().forEach(g -> {
            for (int i = 0; i < g.replicas(); i++) {
                perPod.add(g.gpusPerReplica());
            }
        });
        perPod.sort(null);
        for (int i = 0; i < Math.min(job.minAvailable(), perPod.size()); i++) {
            sum += perPod.get(i);
        }
        return sum;
    }

    private static int freeWholeGpus(ClusterState st) {
        int free = 0;
        for (int node = 0; node < st.size(); node++) {
            free += Long.bitCount(st.freeMask(node));
        }
        return free;
    }

    /** The window's plan applied: preempted jobs gone, migrated ones moved, placed ones running from now. */
    private static void apply(Plan plan, long now, Map<String, RunningJob> running, Map<String, Long> ends, List<PendingJob> waiting) {
        for (Preemption p : plan.preemptions()) {
            running.remove(p.job());
            ends.remove(p.job());
        }
        for (Migration m : plan.migrations()) {
            RunningJob r = running.get(m.job());
            if (r != null) {
                running.put(r.name(), new RunningJob(r.name(), r.queue(), r.priority(), r.preemptible(), r.checkpointable(), r.migratable(),
                        r.startedAtSeconds(), tasksOf(m.tasks(), r.tasks())));
            }
        }
        Map<String, Placement> placed = new HashMap<>();
        plan.placements().forEach(p -> placed.put(p.job(), p));
        waiting.removeIf(job -> {
            Placement p = placed.get(job.name());
            if (p == null) {
                return false;
            }
            running.put(job.name(), new RunningJob(job.name(), job.queue(), job.priority(), job.preemptible(), job.checkpointable(), false,
                    now, tasksOf(job, p.tasks())));
            ends.put(job.name(), EasyBackfill.estimatedEnd(job, now));
            return true;
        });
    }

    /** A migrated job's tasks at their new places, with the CPU and memory they had. */
    private static List<RunningTask> tasksOf(List<TaskPlacement> moved, List<RunningTask> before) {
        Map<String, RunningTask> byName = new HashMap<>();
        before.forEach(t -> byName.put(t.name(), t));
        List<RunningTask> out = new ArrayList<>();
        for (TaskPlacement t : moved) {
            RunningTask old = byName.get(t.task());
            out.add(new RunningTask(t.task(), t.node(), t.gpus(), old == null ? 0 : old.cpuMillis(), old == null ? 0 : old.memoryMiB(),
                    t.gpuMilli(), old == null ? null : old.migProfile(), t.migDevices()));
        }
        return out;
    }

    /** A placed job's tasks, with the CPU and memory of their task group ({@code <group>-<index>}). */
    private static List<RunningTask> tasksOf(PendingJob job, List<TaskPlacement> placed) {
        Map<String, TaskGroup> groups = new HashMap<>();
        job.taskGroups().forEach(g -> groups.put(g.name(), g));
        List<RunningTask> out = new ArrayList<>();
        for (TaskPlacement t : placed) {
            int dash = t.task().lastIndexOf('-');
            TaskGroup g = groups.get(dash < 0 ? t.task() : t.task().substring(0, dash));
            out.add(new RunningTask(t.task(), t.node(), t.gpus(), g == null ? 0 : g.cpuMillis(), g == null ? 0 : g.memoryMiB(), t.gpuMilli(),
                    g == null ? null : g.migProfile(), t.migDevices()));
        }
        return out;
    }

    private static RunningJob asRunning(PendingJob job, ClusterState st, List<GangPacker.Assigned> fit, long t) {
        List<RunningTask> tasks = fit.stream()
                .map(a -> st.running(a.node(), a.replica(), a.gpus()))
                .toList();
        return new RunningJob(job.name(), job.queue(), job.priority(), job.preemptible(), job.checkpointable(), false, t, tasks);
    }

    /** Ends every job due by {@code t}, remembering which GPUs each held. */
    private static void release(long t, Map<String, RunningJob> running, Map<String, Long> ends, Map<String, Set<String>> releasedOn) {
        List<String> due = ends.entrySet().stream().filter(e -> e.getValue() <= t).map(Map.Entry::getKey).toList();
        for (String name : due) {
            RunningJob r = running.remove(name);
            if (r != null) {
                for (RunningTask task : r.tasks()) {
                    for (int g : task.gpus()) {
                        releasedOn.computeIfAbsent(task.node() + "/" + g, k -> new HashSet<>()).add(name);
                    }
                    for (String mig : task.migDevices()) {
                        releasedOn.computeIfAbsent(task.node() + "/mig/" + mig, k -> new HashSet<>()).add(name);
                    }
                }
            }
        }
        // a job that ended stays in ends (with its end in the past) only while it may still be named: keep it
    }

    /** The jobs that ended in the replay on the GPUs this fit takes, earliest end first. */
    private static List<String> waitsFor(ClusterState st, List<GangPacker.Assigned> fit, Map<String, Set<String>> releasedOn,
            Map<String, Long> ends) {
        Set<String> names = new TreeSet<>();
        for (GangPacker.Assigned a : fit) {
            for (int g : a.gpus()) {
                String node = st.node(a.node()).name();
                Collection<String> on = releasedOn.get(g >= ClusterState.MIG_SLOT
                        ? node + "/mig/" + st.node(a.node()).migDevices().get(g - ClusterState.MIG_SLOT).id() : node + "/" + g);
                if (on != null) {
                    names.addAll(on);
                }
            }
        }
        return names.stream()
                .sorted(Comparator.comparingLong((String n) -> ends.getOrDefault(n, Long.MAX_VALUE)).thenComparing(n -> n))
                .limit(MAX_WAITS_FOR)
                .toList();
    }

    private static String note(StartForecast.Basis basis, List<String> waitsFor) {
        return switch (basis) {
            case NOW -> "fits now";
            case RESERVATION -> "reserved" + (waitsFor.isEmpty() ? "" : ": after " + ending(waitsFor));
            // on GPUs free now: it waits for its turn (a reservation, its queue's limit), not for particular jobs
            default -> waitsFor.isEmpty() ? "after the jobs ahead of it start" : "after " + ending(waitsFor);
        };
    }

    private static String ending(List<String> jobs) {
        return jobs.size() == 1 ? "1 job ends" : jobs.size() == MAX_WAITS_FOR ? MAX_WAITS_FOR + "+ jobs end" : jobs.size() + " jobs end";
    }

    private static String hours(long seconds) {
        return seconds % 3600 == 0 ? seconds / 3600 + " h" : seconds + " s";
    }
}
