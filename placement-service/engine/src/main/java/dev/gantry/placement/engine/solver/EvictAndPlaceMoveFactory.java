package dev.gantry.placement.engine.solver;

import ai.timefold.solver.core.impl.heuristic.selector.move.factory.MoveIteratorFactory;
import ai.timefold.solver.core.impl.score.director.ScoreDirector;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.random.RandomGenerator;

/**
 * Random {@link EvictAndPlaceMove}s for the gangs that want a (better) home: pending gangs left
 * out and preempted running jobs. Knows which gang holds which GPU through an index it brings up
 * to date at each step by comparing every entity's option with the last one it saw (a pointer
 * scan, cheap next to score calculation); moves are undone within a step, so it stays exact.
 */
public final class EvictAndPlaceMoveFactory implements MoveIteratorFactory<PlacementSolution, EvictAndPlaceMove> {
    private static final int ATTEMPTS = 8;

    private List<GangAssignment> entities;
    private PlacementOption[] known;
    private final Map<GpuSlot, List<GangAssignment>> holders = new IdentityHashMap<>();
    private final List<GangAssignment> wanting = new ArrayList<>();
    /** Running jobs away from their current placement (a planned move), as of the last {@link #sync}. */
    private final List<GangAssignment> away = new ArrayList<>();

    @Override
    public long getSize(ScoreDirector<PlacementSolution> scoreDirector) {
        return scoreDirector.getWorkingSolution().getAssignments().size();
    }

    @Override
    public Iterator<EvictAndPlaceMove> createOriginalMoveIterator(ScoreDirector<PlacementSolution> scoreDirector) {
        throw new UnsupportedOperationException("evict-and-place moves are random only");
    }

    @Override
    public Iterator<EvictAndPlaceMove> createRandomMoveIterator(ScoreDirector<PlacementSolution> scoreDirector, RandomGenerator random) {
        sync(scoreDirector.getWorkingSolution());
        return new Iterator<>() {
            @Override
            public boolean hasNext() {
                return !entities.isEmpty();
            }

            @Override
            public EvictAndPlaceMove next() {
                for (int attempt = 0; attempt < ATTEMPTS; attempt++) {
                    EvictAndPlaceMove m = build(random);
                    if (m != null) {
                        return m;
                    }
                }
                // nothing sensible found: a plain re-assignment keeps the iterator honest
                GangAssignment e = entities.get(random.nextInt(entities.size()));
                List<PlacementOption> opts = e.getOptions();
                PlacementOption o = opts.isEmpty() ? null : opts.get(random.nextInt(opts.size()));
                return new EvictAndPlaceMove(List.of(e), java.util.Collections.singletonList(o));
            }
        };
    }

    /** Brings the GPU-holder index up to date with the solution (a pointer scan; see the class comment). */
    void sync(PlacementSolution solution) {
        List<GangAssignment> current = solution.getAssignments();
        if (current != entities) {
            entities = current;
            known = new PlacementOption[current.size()];
            holders.clear();
            for (int i = 0; i < current.size(); i++) {
                index(current.get(i), null, current.get(i).getOption());
                known[i] = current.get(i).getOption();
            }
        } else {
            for (int i = 0; i < current.size(); i++) {
                PlacementOption now = current.get(i).getOption();
                if (now != known[i]) {
                    index(current.get(i), known[i], now);
                    known[i] = now;
                }
            }
        }
        wanting.clear();
        away.clear();
        for (GangAssignment a : current) {
            if (a.getOption() == null && !a.getOptions().isEmpty()) {
                wanting.add(a);
            } else if (a.migrated()) {
                away.add(a);
            }
        }
    }

    private void index(GangAssignment a, PlacementOption before, PlacementOption after) {
        if (before != null) {
            for (SlotUse u : before.slots()) {
                List<GangAssignment> l = holders.get(u.slot());
                if (l != null) {
                    l.remove(a);
                }
            }
        }
        if (after != null) {
            for (SlotUse u : after.slots()) {
                holders.computeIfAbsent(u.slot(), k -> new ArrayList<>(2)).add(a);
            }
        }
    }

    private EvictAndPlaceMove build(RandomGenerator random) {
        GangAssignment target;
        if (!wanting.isEmpty()) {
            // tournament of two: valuable gangs (priority-weighted GPUs) are tried more often
            GangAssignment a = wanting.get(random.nextInt(wanting.size()));
            GangAssignment b = wanting.get(random.nextInt(wanting.size()));
            target = a.gpuWeight() * a.gpuMilli() >= b.gpuWeight() * b.gpuMilli() ? a : b;
        } else {
            target = entities.get(random.nextInt(entities.size()));
        }
        List<PlacementOption> opts = target.getOptions();
        if (opts.isEmpty()) {
            return null;
        }
        // bias to the first (best-fit) options: the smaller of two draws
        PlacementOption chosen = opts.get(Math.min(random.nextInt(opts.size()), random.nextInt(opts.size())));
        return moveFor(target, chosen);
    }

    /** Gangs that want a home (pending left out, preempted), as of the last {@link #sync}. */
    List<GangAssignment> wanting() {
        return wanting;
    }

    /**
     * The move that gives {@code target} the option {@code chosen} and sends every gang in its
     * way to its first clear option (or unplaces / preempts it); null when a gang in the way can
     * neither move nor be preempted. A job moved earlier whose own GPUs this leaves clear (the
     * target gives up the placement it was moved for) goes back in the same move: otherwise
     * replacing one set of moves by a cheaper one would take two steps, the first of them worse.
     */
    EvictAndPlaceMove moveFor(GangAssignment target, PlacementOption chosen) {
        if (chosen == target.getOption()) {
            return null;
        }
        Set<GangAssignment> inWay = new LinkedHashSet<>();
        for (SlotUse u : chosen.slots()) {
            for (GangAssignment h : holders.getOrDefault(u.slot(), List.of())) {
                if (h != target && conflicts(u, h.getOption())) {
                    inWay.add(h);
                }
            }
        }
        List<GangAssignment> moved = new ArrayList<>();
        List<PlacementOption> values = new ArrayList<>();
        Set<GpuSlot> taken = new java.util.HashSet<>();
        chosen.slots().forEach(u -> taken.add(u.slot()));
        for (GangAssignment h : inWay) {
            PlacementOption alt = alternative(h, taken, inWay, target);
            if (alt == null && h.running() && !h.preemptible()) {
                return null;
            }
            if (alt != null) {
                alt.slots().forEach(u -> taken.add(u.slot()));
            }
            moved.add(h);
            values.add(alt);
        }
        Set<GangAssignment> moving = new java.util.HashSet<>(moved);
        for (GangAssignment h : away) {
            if (h != target && !moving.contains(h) && clear(h, h.current(), taken, moving, target)) {
                h.current().slots().forEach(u -> taken.add(u.slot()));
                moved.add(h);
                values.add(h.current());
            }
        }
        moved.add(target);
        values.add(chosen);
        return new EvictAndPlaceMove(moved, values);
    }

    private static boolean conflicts(SlotUse u, PlacementOption other) {
        if (other == null) {
            return false;
        }
        for (SlotUse o : other.slots()) {
            if (o.slot() == u.slot()) {
                return u.milli() + o.milli() + u.slot().pinnedMilli() > 1000;
            }
        }
        return false;
    }

    /** The first option of {@code h} clear of the GPUs taken by this move and of every gang staying put. */
    private PlacementOption alternative(GangAssignment h, Set<GpuSlot> taken, Set<GangAssignment> moving, GangAssignment target) {
        for (PlacementOption p : h.getOptions()) {
            if (p != h.getOption() && clear(h, p, taken, moving, target)) {
                return p;
            }
        }
        return null;
    }

    /** Whether option {@code p} of {@code h} is clear of the GPUs taken by this move and of every gang staying put. */
    private boolean clear(GangAssignment h, PlacementOption p, Set<GpuSlot> taken, Set<GangAssignment> moving, GangAssignment target) {
        for (SlotUse u : p.slots()) {
            if (taken.contains(u.slot())) {
                return false;
            }
            for (GangAssignment other : holders.getOrDefault(u.slot(), List.of())) {
                if (other != h && other != target && !moving.contains(other) && conflicts(u, other.getOption())) {
                    return false;
                }
            }
        }
        return true;
    }
}
