package dev.gantry.placement.engine.domain;

/** A running job evicted (checkpoint, SIGTERM, requeue), with the reason a person can read. */
public record Preemption(String job, String reason) {
}
