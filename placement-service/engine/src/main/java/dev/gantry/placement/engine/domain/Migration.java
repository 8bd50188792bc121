package dev.gantry.placement.engine.domain;

import java.util.List;

/** A running job moved whole: every task, same GPU count, new node and indices. */
public record Migration(String job, List<TaskPlacement> tasks) {
    public Migration {
        tasks = List.copyOf(tasks);
    }
}
