package dev.gantry.placement.engine.domain;

/** A pending job left waiting, with what blocks it. */
public record Unplaced(String job, String reason) {
}
