package dev.gantry.contracts.jobs;

import java.time.Instant;
import java.util.UUID;

/**
 * Payload of {@code jobs.refused}: admission did not admit a user's pod gang
 * ({@code placements.gang-formed}): its namespace is mapped to no team, the team may not use the
 * queue, the quota says no, or the pods ask for something invalid. {@code reason} says which, in
 * words the pods' owner can act on. Nothing was queued; placement leaves the pods waiting.
 */
public record JobRefused(UUID jobId, String namespace, String gang, String reason, Instant refusedAt) {
}
