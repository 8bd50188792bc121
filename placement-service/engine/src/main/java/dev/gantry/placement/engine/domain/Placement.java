package dev.gantry.placement.engine.domain;

import java.util.List;

/** A pending job placed: one entry per pod placed (at least minAvailable). */
public record Placement(String job, List<TaskPlacement> tasks) {
    public Placement {
        tasks = List.copyOf(tasks);
    }
}
