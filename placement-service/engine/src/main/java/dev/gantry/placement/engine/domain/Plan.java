package dev.gantry.placement.engine.domain;

import java.util.List;
import java.util.Map;

/**
 * A planner's answer for one scenario. {@code metadata} carries planner facts (planner name,
 * score, fallback) that the checker ignores.
 */
public record Plan(
        String format,
        String scenario,
        List<Placement> placements,
        List<Preemption> preemptions,
        List<Migration> migrations,
        List<Unplaced> unplaced,
        long solveMillis,
        Map<String, String> metadata) {

    public static final String FORMAT = "gantry-plan/v1";

    public Plan {
        placements = List.copyOf(placements);
        preemptions = List.copyOf(preemptions);
        migrations = List.copyOf(migrations);
        unplaced = List.copyOf(unplaced);
        metadata = metadata == null ? Map.of() : Map.copyOf(metadata);
    }

    public Plan withSolveMillis(long millis) {
        return new Plan(format, scenario, placements, preemptions, migrations, unplaced, millis, metadata);
    }

    public Plan withMetadata(Map<String, String> extra) {
        var merged = new java.util.LinkedHashMap<>(metadata);
        merged.putAll(extra);
        return new Plan(format, scenario, placements, preemptions, migrations, unplaced, solveMillis, merged);
    }
}
