package dev.gantry.placement.engine.planner;

import dev.gantry.placement.engine.domain.PendingJob;
import dev.gantry.placement.engine.domain.Placement;
import dev.gantry.placement.engine.domain.Plan;
import dev.gantry.placement.engine.domain.RunningJob;
import dev.gantry.placement.engine.domain.RunningTask;
import dev.gantry.placement.engine.domain.Scenario;
import dev.gantry.placement.engine.domain.Unplaced;
import dev.gantry.placement.engine.packing.Aging;
import dev.gantry.placement.engine.packing.ClusterState;
import dev.gantry.placement.engine.packing.EasyBackfill;
import dev.gantry.placement.engine.packing.GangPacker;
import dev.gantry.placement.engine.packing.PlanAssembler;
import dev.gantry.placement.engine.packing.QueueLedger;
import dev.gantry.placement.engine.packing.Replica;
import dev.gantry.placement.engine.validation.PlanValidator;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.ToLongFunction;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Wraps a planner in EASY backfilling's reservation for the head of the line, for callers that
 * know when running jobs will end (a scenario does not say: the caller supplies the estimates).
 * In a window without a reservation this is exactly the planner it wraps.
 *
 * <p>Waiting jobs are taken in aged priority order ({@link Aging#order}: among equal priorities
 * the longest-waiting first). The first that does not fit now, after those before it (packed by
 * plain best fit, {@link EasyBackfill}), is the head: it gets the earliest GPUs that running jobs
 * free by their estimated ends (and the jobs before it, which EASY starts first, by theirs). The
 * reserved GPUs that are free now and not taken by those jobs are a hole until then:
 * <ol>
 * <li>waiting jobs that end (by their estimate) before the reservation starts fill the hole, in
 * the same order, by best fit inside it; one that does not fit inside it may also take GPUs free
 * now outside it (but not those EASY gave to the jobs before the head): it is gone in time;
 * <li>the wrapped planner plans everything else with the hole held (its jobs as running, its
 * unused GPUs by a pinned placeholder of the head's queue), so jobs that would outlast the
 * reservation, or have no estimate, keep off the reserved GPUs, and the head starts no later
 * than its reservation when the estimates hold.
 * </ol>
 * With {@code reservations} above one, the first that many jobs that do not fit get a reservation
 * each ({@link EasyBackfill}'s conservative variant: a later one on GPUs no earlier one holds); a
 * job then fills the holes of the reservations it ends in time for, and the wrapped planner
 * plans the rest with every hole held. One reservation (the default) is EASY, as above. Per queue
 * ({@code perQueue}), each queue's first {@code reservations} such jobs get one, so one queue's
 * head cannot leave another queue's head without a reservation.
 * A head on MIG devices is reserved for the same way: the reserved MIG devices free now are part of
 * the hole, and held (by the placeholder, one task per profile) from jobs that would outlast the reservation.
 * The combined plan is checked against the real scenario; if it were invalid, the wrapped
 * planner's plan for the real scenario is returned instead ({@code metadata.reservationDropped}).
 */
public final class ReservingPlanner implements Planner {
    private static final Logger LOG = LoggerFactory.getLogger(ReservingPlanner.class);
    /** Not a valid job name (FORMAT.md: DNS subdomains), so it cannot collide with one. */
    static final String PLACEHOLDER_PREFIX = "reserved-for:";
    /** At most this many jobs moved for a head when the solver found no moves (the disruption budget may allow fewer). */
    static final int MOVES_WITHOUT_SOLVER = 4;

    private final Planner planner;
    private final ToLongFunction<String> estimatedEnd;
    private final int reservations;
    private final boolean perQueue;

    /**
     * @param planner      plans the window around the reservation
     * @param estimatedEnd running job name -> estimated end (absolute seconds, the scenario's clock);
     *                     {@link Long#MAX_VALUE} when unknown
     */
    public ReservingPlanner(Planner planner, ToLongFunction<String> estimatedEnd) {
        this(planner, estimatedEnd, 1);
    }

    /** @param reservations how many jobs that do not fit get a reservation (1: EASY's head of the line only) */
    public ReservingPlanner(Planner planner, ToLongFunction<String> estimatedEnd, int reservations) {
        this(planner, estimatedEnd, reservations, false);
    }

    /** @param perQueue {@code reservations} counts per queue (each queue's heads), not in all */
    public ReservingPlanner(Planner planner, ToLongFunction<String> estimatedEnd, int reservations, boolean perQueue) {
        this.perQueue = perQueue;
        if (reservations < 1) {
            throw new IllegalArgumentException("reservations must be at least 1");
        }
        this.planner = planner;
        this.estimatedEnd = estimatedEnd;
        this.reservations = reservations;
    }

    @Override
    public String name() {
        return planner.name();
    }

    @Override
    public boolean movesWork() {
        return planner.movesWork();
    }

    @Override
    public Plan plan(Scenario sc, SolverProfile profile) {
        long start = System.nanoTime();
        List<PendingJob> order = new ArrayList<>(sc.pending());
        order.sort(Aging.order(sc.nowSeconds()));
        GangPacker packer = new GangPacker(sc.nodes());
        EasyBackfill easy = new EasyBackfill(sc, packer, estimatedEnd, reservations, perQueue);
        for (PendingJob job : order) {
            // in all: once every reservation is made nothing more is learned; per queue a later queue may still need its own
            if (easy.offer(job) == EasyBackfill.Outcome.RESERVED && !perQueue && easy.reservations().size() >= reservations) {
                break;
            }
        }
        List<EasyBackfill.Reservation> res = easy.reservations();
        if (res.isEmpty()) {
            return planner.plan(sc, profile);
        }
        Plan moved = placedByMoves(sc, res, profile);
        if (moved != null) {
            return moved;
        }
        ClusterState now = new ClusterState(sc);
        sc.running().forEach(now::occupy);
        // not the GPUs EASY gave to the jobs before the heads: the reservations counted on them being taken
        List<Hole> holes = res.stream().map(r -> freeReserved(easy.state(), r)).toList();
        Hole hole = union(holes);
        ClusterState holeOnly = onlyHoleFree(now, hole);
        // free here: the holes and the GPUs nobody is counted on (EASY's state keeps the jobs ahead of the heads)
        ClusterState notCountedOn = easy.state().copy();
        List<Started> inHole = startEndingInTime(sc, order, res, holes, holeOnly, notCountedOn, packer);
        Scenario held = holding(sc, res, holes, inHole, holeOnly);
        Plan around = planner.plan(held, profile.withTimeLimit(remaining(profile, start)));
        Plan merged = merge(sc, res, inHole, holeOnly, around, hole, start);
        List<String> violations = PlanValidator.validate(sc, merged);
        if (!violations.isEmpty()) {
            // the placeholder counts toward the head's queue: a queue above its capability could let the plan break it
            LOG.warn("{}: plan around the reservation for {} invalid ({}), planning without it", sc.name(), res.getFirst().head(),
                    violations.getFirst());
            return planner.plan(sc, profile.withTimeLimit(remaining(profile, start)))
                    .withMetadata(Map.of("reservationDropped", violations.getFirst()));
        }
        return merged;
    }

    /**
     * With migratable or preemptible work running, a head may fit now by moving or preempting it,
     * which beats waiting for its reservation: the wrapped planner is asked first, with three
     * quarters of the time, on the real scenario (a reservation would hide the heads from it). Its
     * plan when it places a head by moving work; else the moves {@link RoomByMoves} finds for a head
     * without the solver (it may have run out of time); else null (and the reservations are planned
     * in the time left). Asked only if some head would fit with that work gone (plain best fit on the
     * pinned work alone): otherwise no move or eviction can place one, and the reservations get the
     * whole window.
     */
    private Plan placedByMoves(Scenario sc, List<EasyBackfill.Reservation> res, SolverProfile profile) {
        // moving or preempting running work may place a head now, which beats its reservation: the reservation's
        // hole would hide the free GPUs the head needs beside a victim's
        if (sc.running().stream().noneMatch(j -> j.migratable() || j.preemptible()) || !fitsWithoutMovableWork(sc, res)) {
            return null;
        }
        // with half a 200 ms window, building the solver's model left too little time on a loaded machine: windows
        // fell back to greedy, which never moves, and a gang that moves would place waited (MigrationTest, NodeAgentMigrationIT)
        Plan direct = planner.plan(sc, profile.withTimeLimit(profile.spentLimit().multipliedBy(3).dividedBy(4)));
        Set<String> placed = new java.util.HashSet<>();
        direct.placements().forEach(p -> placed.add(p.job()));
        // one head placed by moves is worth it: a head nothing can place (another queue's, an odd shape) must not
        // keep the others waiting; the reservations are made again next window
        boolean any = res.stream().anyMatch(r -> placed.contains(r.head()));
        if (any && !(direct.migrations().isEmpty() && direct.preemptions().isEmpty())) {
            return direct.withMetadata(Map.of("reservationSkipped", "placed by moving or preempting running work"));
        }
        // out of time on a loaded machine the solver returns best fit's plan, which never moves: the moves a
        // head needs must not depend on the machine's load (MigrationTest, ScheduledConsolidationTest failed in CI so)
        for (EasyBackfill.Reservation r : res) {
            if (!planner.movesWork()) {
                break; // best fit and fifo stay baselines that never move
            }
            PendingJob head = sc.pending().stream().filter(p -> p.name().equals(r.head())).findFirst().orElseThrow();
            Plan moves = RoomByMoves.find(sc, head, MOVES_WITHOUT_SOLVER);
            if (moves != null) {
                return moves.withMetadata(Map.of("reservationSkipped", "placed by moving running work (found without the solver)"));
            }
        }
        return null;
    }

    /** Whether some head fits on the GPUs, CPU and memory that pinned running work (neither movable nor preemptible) leaves. */
    private static boolean fitsWithoutMovableWork(Scenario sc, List<EasyBackfill.Reservation> res) {
        ClusterState pinnedOnly = new ClusterState(sc);
        sc.running().stream().filter(RunningJob::pinned).forEach(pinnedOnly::occupy);
        GangPacker packer = new GangPacker(sc.nodes());
        Set<String> heads = new java.util.HashSet<>();
        res.forEach(r -> heads.add(r.head()));
        for (PendingJob job : sc.pending()) {
            if (heads.contains(job.name())) {
                GangPacker.GangFit fit = packer.place(pinnedOnly, job, Replica.of(job));
                if (fit != null && fit.complete()) {
                    return true;
                }
            }
        }
        return false;
    }

    /**
     * Per node, reserved devices free now: whole GPUs ({@code gpus}, a GPU index mask) and MIG devices ({@code mig},
     * bit k: the node's k-th MIG device). A reservation holds a MIG head's devices as it holds GPUs, so later jobs of
     * the head's profile cannot keep taking the devices it waits for.
     */
    private record Hole(long[] gpus, long[] mig) {

        Hole(int nodes) {
            this(new long[nodes], new long[nodes]);
        }

        void add(Hole other) {
            for (int node = 0; node < gpus.length; node++) {
                gpus[node] |= other.gpus[node];
                mig[node] |= other.mig[node];
            }
        }

        boolean empty() {
            return Arrays.stream(gpus).allMatch(m -> m == 0) && Arrays.stream(mig).allMatch(m -> m == 0);
        }
    }

    private static Hole union(List<Hole> holes) {
        Hole all = new Hole(holes.getFirst().gpus().length);
        holes.forEach(all::add);
        return all;
    }

    /** The device slots of a GPU mask and a MIG device mask ({@link ClusterState#MIG_SLOT} + k). */
    private static int[] slots(long gpus, long mig) {
        int[] g = ClusterState.indices(gpus);
        int[] m = ClusterState.indices(mig);
        int[] out = Arrays.copyOf(g, g.length + m.length);
        for (int i = 0; i < m.length; i++) {
            out[g.length + i] = ClusterState.MIG_SLOT + m[i];
        }
        return out;
    }

    /** The deadline covers the whole call: what is left of it (at least a millisecond). */
    private static Duration remaining(SolverProfile profile, long start) {
        Duration left = profile.spentLimit().minusNanos(System.nanoTime() - start);
        return left.toMillis() < 1 ? Duration.ofMillis(1) : left;
    }

    /** Per node, the reserved GPUs that are wholly free in {@code state}, and the reserved MIG devices free there. */
    private static Hole freeReserved(ClusterState state, EasyBackfill.Reservation res) {
        Hole hole = new Hole(state.size());
        for (GangPacker.Assigned a : res.gpus()) {
            for (int g : a.gpus()) {
                if (g < ClusterState.MIG_SLOT) {
                    hole.gpus()[a.node()] |= state.freeMask(a.node()) & (1L << g);
                } else {
                    hole.mig()[a.node()] |= state.migFreeMask(a.node()) & (1L << (g - ClusterState.MIG_SLOT));
                }
            }
        }
        return hole;
    }

    /** The state now with every free GPU and MIG device outside the hole taken: where a job may go to use the hole alone. */
    private static ClusterState onlyHoleFree(ClusterState now, Hole hole) {
        ClusterState st = now.copy();
        for (int node = 0; node < st.size(); node++) {
            int[] outside = slots(now.freeMask(node) & ~hole.gpus()[node], now.migFreeMask(node) & ~hole.mig()[node]);
            if (outside.length > 0) {
                st.take(node, outside, null, 0, 0);
            }
        }
        return st;
    }

    /** A waiting job started in the hole, and where. */
    private record Started(PendingJob job, GangPacker.GangFit fit) {
    }

    /**
     * Jobs that end before a reservation starts, in order: into the holes of the reservations
     * they end in time for alone where they fit there, else across those holes and the GPUs free
     * now that nobody is counted on (a gang whose pods need a little more than the hole holds);
     * mutates both states. Such a job may use any of them: it is gone before those heads start.
     */
    private static List<Started> startEndingInTime(Scenario sc, List<PendingJob> order, List<EasyBackfill.Reservation> res,
            List<Hole> holes, ClusterState holeOnly, ClusterState notCountedOn, GangPacker packer) {
        List<Started> inHole = new ArrayList<>();
        QueueLedger ledger = new QueueLedger(sc);
        Set<String> heads = res.stream().map(EasyBackfill.Reservation::head).collect(Collectors.toSet());
        for (PendingJob job : order) {
            if (heads.contains(job.name())) {
                continue;
            }
            long end = EasyBackfill.estimatedEnd(job, sc.nowSeconds());
            // the holes of the reservations it would outlast: closed to it
            Hole closed = new Hole(holeOnly.size());
            boolean anyOpen = false;
            for (int i = 0; i < res.size(); i++) {
                if (res.get(i).endsInTime(end)) {
                    anyOpen = true;
                } else {
                    closed.add(holes.get(i));
                }
            }
            if (!anyOpen) {
                continue;
            }
            List<Replica> reps = Replica.of(job);
            if (ledger.headroom(job.queue()) < GangPacker.minGangMilli(job, reps)) {
                continue;
            }
            GangPacker.GangFit fit = packer.place(without(holeOnly, closed), job, reps);
            if (fit == null || !fit.complete()) {
                fit = packer.place(without(notCountedOn, closed), job, reps);
            }
            if (fit == null || !fit.complete() || ledger.blockedBy(job.queue(), fit.gpuMilli()) != null) {
                continue;
            }
            for (GangPacker.Assigned a : fit.tasks()) {
                holeOnly.take(a.node(), a.replica(), a.gpus()); // GPUs outside the hole are taken there already: only CPU and memory move
                notCountedOn.take(a.node(), a.replica(), a.gpus());
            }
            ledger.add(job.queue(), fit.gpuMilli());
            inHole.add(new Started(job, fit));
        }
        return inHole;
    }

    /** The state, or a copy of it with the free GPUs and MIG devices of {@code closed} taken. */
    private static ClusterState without(ClusterState st, Hole closed) {
        ClusterState out = null;
        for (int node = 0; node < st.size(); node++) {
            int[] take = slots(st.freeMask(node) & closed.gpus()[node], st.migFreeMask(node) & closed.mig()[node]);
            if (take.length > 0) {
                if (out == null) {
                    out = st.copy();
                }
                out.take(node, take, null, 0, 0);
            }
        }
        return out == null ? st : out;
    }

    /**
     * The scenario the wrapped planner sees: the holes' jobs already running (pinned), each
     * hole's unused GPUs and MIG devices held by a pinned placeholder of its head's queue, the
     * holes' jobs no longer waiting.
     */
    private static Scenario holding(Scenario sc, List<EasyBackfill.Reservation> res, List<Hole> holes, List<Started> inHole,
            ClusterState holeOnly) {
        if (inHole.isEmpty() && holes.stream().allMatch(Hole::empty)) {
            return sc; // every reserved GPU is busy now: nothing placed now can delay a head
        }
        List<RunningJob> running = new ArrayList<>(sc.running());
        for (Started s : inHole) {
            PendingJob job = s.job();
            List<RunningTask> tasks = s.fit().tasks().stream()
                    .map(a -> holeOnly.running(a.node(), a.replica(), a.gpus()))
                    .toList();
            running.add(new RunningJob(job.name(), job.queue(), job.priority(), false, false, false, sc.nowSeconds(), tasks));
        }
        for (int i = 0; i < res.size(); i++) {
            Hole hole = holes.get(i);
            List<RunningTask> placeholder = new ArrayList<>();
            for (int node = 0; node < hole.gpus().length; node++) {
                long unused = hole.gpus()[node] & holeOnly.freeMask(node);
                if (unused != 0) {
                    placeholder.add(new RunningTask("gpus-" + node, holeOnly.node(node).name(), ascending(ClusterState.indices(unused)), 0, 0, null));
                }
                placeholder.addAll(migPlaceholder(holeOnly.node(node), node, hole.mig()[node] & holeOnly.migFreeMask(node)));
            }
            if (!placeholder.isEmpty()) {
                String headName = res.get(i).head();
                PendingJob head = sc.pending().stream().filter(p -> p.name().equals(headName)).findFirst().orElseThrow();
                running.add(new RunningJob(PLACEHOLDER_PREFIX + head.name(), head.queue(), head.priority(), false, false, false,
                        sc.nowSeconds(), placeholder));
            }
        }
        Set<String> started = inHole.stream().map(s -> s.job().name()).collect(Collectors.toSet());
        List<PendingJob> pending = sc.pending().stream().filter(p -> !started.contains(p.name())).toList();
        return new Scenario(sc.format(), sc.name(), sc.nowSeconds(), sc.nodes(), sc.queues(), running, pending);
    }

    /** Tasks holding a node's unused reserved MIG devices, one per profile (a running task's devices are of one profile). */
    private static List<RunningTask> migPlaceholder(dev.gantry.placement.engine.domain.Node node, int index, long unused) {
        Map<String, List<String>> byProfile = new LinkedHashMap<>();
        for (int k : ClusterState.indices(unused)) {
            dev.gantry.placement.engine.domain.MigDevice d = node.migDevices().get(k);
            byProfile.computeIfAbsent(d.profile(), p -> new ArrayList<>()).add(d.id());
        }
        List<RunningTask> tasks = new ArrayList<>();
        byProfile.forEach((profile, ids) -> tasks.add(new RunningTask("mig-" + index + "-" + tasks.size(), node.name(), List.of(), 0, 0,
                null, profile, ids)));
        return tasks;
    }

    /** The holes' placements plus the wrapped planner's plan, with the reservations in the metadata. */
    private static Plan merge(Scenario sc, List<EasyBackfill.Reservation> res, List<Started> inHole, ClusterState holeOnly,
            Plan around, Hole hole, long start) {
        List<Placement> placements = new ArrayList<>();
        inHole.forEach(s -> placements.add(PlanAssembler.placement(holeOnly, s.job().name(), s.fit().tasks())));
        placements.addAll(around.placements());
        Map<String, Long> startOf = res.stream().collect(Collectors.toMap(EasyBackfill.Reservation::head, EasyBackfill.Reservation::start));
        List<Unplaced> unplaced = around.unplaced().stream()
                .map(u -> u.job().equals(res.getFirst().head())
                        ? new Unplaced(u.job(), "head of the line: GPUs reserved from t=" + startOf.get(u.job()) + " (" + u.reason() + ")")
                        : startOf.containsKey(u.job())
                                ? new Unplaced(u.job(), "GPUs reserved from t=" + startOf.get(u.job()) + " (" + u.reason() + ")")
                                : u)
                .toList();
        Map<String, String> meta = new LinkedHashMap<>(around.metadata());
        meta.put("reservation", res.stream().map(r -> r.head() + "@" + r.start()).collect(Collectors.joining(",")));
        meta.put("reservedGpusFreeNow", Integer.toString(Arrays.stream(hole.gpus()).mapToInt(Long::bitCount).sum()));
        int migFreeNow = Arrays.stream(hole.mig()).mapToInt(Long::bitCount).sum();
        if (migFreeNow > 0) {
            meta.put("reservedMigDevicesFreeNow", Integer.toString(migFreeNow));
        }
        meta.put("startedInReservation", Integer.toString(inHole.size()));
        return new Plan(around.format(), sc.name(), placements, around.preemptions(), around.migrations(), unplaced,
                (System.nanoTime() - start) / 1_000_000, meta);
    }

    private static List<Integer> ascending(int[] gpus) {
        return Arrays.stream(gpus).sorted().boxed().toList();
    }
}
