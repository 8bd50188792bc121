package dev.gantry.placement.engine.domain;

/**
 * A queue: {@code capabilityGpus} null means unbounded; {@code parent} null means a root queue.
 */
public record Queue(String name, double weight, int guaranteeGpus, Integer capabilityGpus, boolean reclaimable, String parent) {
}
