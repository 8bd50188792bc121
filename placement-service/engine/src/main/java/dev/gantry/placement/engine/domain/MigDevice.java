package dev.gantry.placement.engine.domain;

/**
 * One MIG device of a node: {@code id} names it on the node (its UUID, {@code MIG-…}, where the source knows it),
 * {@code gpu} is the index of the GPU it is carved from (a GPU in MIG mode is never given out whole or shared),
 * {@code profile} its profile ({@code 1g.10gb}).
 */
public record MigDevice(String id, int gpu, String profile) {
}
