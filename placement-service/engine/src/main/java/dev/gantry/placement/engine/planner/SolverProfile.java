package dev.gantry.placement.engine.planner;

import dev.gantry.placement.engine.packing.GpuSpeeds;
import dev.gantry.placement.engine.solver.MoveCost;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * How long and how the solver works on a window: a spent limit (the deadline: the best plan
 * at that moment is returned), an unimproved-time limit (stop early once the search stalls), and
 * weight overrides for medium and soft constraints (constraint name -> weight; a hard constraint
 * cannot be overridden, see {@code PlacementConstraintProvider}), and the relative speeds of GPU
 * models that decide among placements the workload sees as equal ({@link GpuSpeeds}), and what
 * moving a running job costs in the score ({@link MoveCost}: per move and per GPU moved), and
 * whether reclaim works toward each queue's deserved fair share ({@code reclaimTowardFairShare}:
 * a queue under its fair share reclaims from queues above theirs, whatever the priorities, never
 * taking a queue under its own; see {@link dev.gantry.placement.engine.packing.FairShares}), not
 * only toward guarantees (the default); {@code fairShareTrees} limits that to the trees under these
 * root queues (empty: every tree).
 */
public record SolverProfile(String name, Duration spentLimit, Duration unimprovedLimit, Map<String, Long> weightOverrides, GpuSpeeds gpuSpeeds,
        MoveCost moveCost, boolean reclaimTowardFairShare, Set<String> fairShareTrees) {

    /** About 200 ms: interactive dry runs and tests. */
    public static final SolverProfile FAST = new SolverProfile("fast", Duration.ofMillis(200), Duration.ofMillis(100), Map.of());
    /** About 2 s: the default scheduling window. */
    public static final SolverProfile BALANCED = new SolverProfile("balanced", Duration.ofSeconds(2), Duration.ofMillis(800), Map.of());
    /** About 30 s: offline what-if planning and benchmarks. */
    public static final SolverProfile THOROUGH = new SolverProfile("thorough", Duration.ofSeconds(30), Duration.ofSeconds(8), Map.of());

    private static final Pattern DURATION = Pattern.compile("(\\d+(?:\\.\\d+)?)(ms|s|m)");

    public SolverProfile {
        if (spentLimit.isNegative() || spentLimit.isZero()) {
            throw new IllegalArgumentException("time limit must be positive");
        }
        if (unimprovedLimit.compareTo(spentLimit) > 0) {
            unimprovedLimit = spentLimit;
        }
        weightOverrides = weightOverrides == null ? Map.of() : Map.copyOf(weightOverrides);
        gpuSpeeds = gpuSpeeds == null ? GpuSpeeds.DEFAULT : gpuSpeeds;
        moveCost = moveCost == null ? MoveCost.DEFAULT : moveCost;
        fairShareTrees = fairShareTrees == null ? Set.of() : Set.copyOf(fairShareTrees);
    }

    /** With the default GPU speeds and move cost. */
    public SolverProfile(String name, Duration spentLimit, Duration unimprovedLimit, Map<String, Long> weightOverrides) {
        this(name, spentLimit, unimprovedLimit, weightOverrides, GpuSpeeds.DEFAULT, MoveCost.DEFAULT);
    }

    /** Reclaim toward guarantees only. */
    public SolverProfile(String name, Duration spentLimit, Duration unimprovedLimit, Map<String, Long> weightOverrides, GpuSpeeds gpuSpeeds,
            MoveCost moveCost) {
        this(name, spentLimit, unimprovedLimit, weightOverrides, gpuSpeeds, moveCost, false, Set.of());
    }

    /** @throws IllegalArgumentException for an unknown name */
    public static SolverProfile byName(String name) {
        return switch (name == null ? "balanced" : name.toLowerCase(Locale.ROOT)) {
            case "fast" -> FAST;
            case "balanced" -> BALANCED;
            case "thorough" -> THOROUGH;
            default -> throw new IllegalArgumentException("unknown profile " + name + " (one of fast, balanced, thorough)");
        };
    }

    /** Same profile with another deadline; the unimproved limit never exceeds it. */
    public SolverProfile withTimeLimit(Duration limit) {
        return new SolverProfile(name, limit, unimprovedLimit, weightOverrides, gpuSpeeds, moveCost, reclaimTowardFairShare, fairShareTrees);
    }

    public SolverProfile withWeightOverrides(Map<String, Long> overrides) {
        return new SolverProfile(name, spentLimit, unimprovedLimit, overrides, gpuSpeeds, moveCost, reclaimTowardFairShare, fairShareTrees);
    }

    /** Same profile with other GPU speeds ({@link GpuSpeeds#NONE}: no model preferred). */
    public SolverProfile withGpuSpeeds(GpuSpeeds speeds) {
        return new SolverProfile(name, spentLimit, unimprovedLimit, weightOverrides, speeds, moveCost, reclaimTowardFairShare, fairShareTrees);
    }

    /** Same profile with another cost of a move ({@link MoveCost}: per move and per GPU moved). */
    public SolverProfile withMoveCost(MoveCost cost) {
        return new SolverProfile(name, spentLimit, unimprovedLimit, weightOverrides, gpuSpeeds, cost, reclaimTowardFairShare, fairShareTrees);
    }

    /** Same profile reclaiming toward the deserved fair share ({@code true}) or toward guarantees only. */
    public SolverProfile withReclaimTowardFairShare(boolean on) {
        return new SolverProfile(name, spentLimit, unimprovedLimit, weightOverrides, gpuSpeeds, moveCost, on, fairShareTrees);
    }

    /**
     * Same profile with reclaim toward the fair share limited to these queue trees (root queue names;
     * empty: every tree), when it is on: the other trees' queues are entitled to their guarantees only.
     */
    public SolverProfile withFairShareTrees(Set<String> trees) {
        return new SolverProfile(name, spentLimit, unimprovedLimit, weightOverrides, gpuSpeeds, moveCost, reclaimTowardFairShare, trees);
    }

    /** Parses {@code 200ms}, {@code 2s}, {@code 1.5s}, {@code 1m}. */
    public static Duration parseDuration(String text) {
        Matcher m = DURATION.matcher(text == null ? "" : text.trim());
        if (!m.matches()) {
            throw new IllegalArgumentException("bad duration " + text + " (like 200ms, 2s, 1m)");
        }
        double v = Double.parseDouble(m.group(1));
        long millis = switch (m.group(2)) {
            case "ms" -> Math.round(v);
            case "s" -> Math.round(v * 1000);
            default -> Math.round(v * 60_000);
        };
        if (millis <= 0) {
            throw new IllegalArgumentException("time limit must be positive: " + text);
        }
        return Duration.ofMillis(millis);
    }
}
