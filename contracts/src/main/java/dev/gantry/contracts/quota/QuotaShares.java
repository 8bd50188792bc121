package dev.gantry.contracts.quota;

import java.time.Instant;
import java.util.List;

/**
 * Payload of {@code quota.shares}: what every queue deserves now, published by the quota service
 * when the shares change and at a fixed period. Placement uses it to order and reclaim; it carries
 * each queue's tree fields too, so a consumer needs nothing else to build its queue snapshot
 * (the queue of the scenario format, FORMAT.md).
 *
 * @param capacity the cluster capacity the shares divide
 * @param queues   every queue, parents before children
 */
public record QuotaShares(Instant computedAt, Capacity capacity, double usageHalfLifeHours, List<QueueShare> queues) {

    public record Capacity(long gpus, long cpuMillis, long memoryMiB) {
    }

    /**
     * One queue's share. Deserved amounts are fractional (three decimals); a null capability is
     * unbounded; {@code usageFactor} (0..1] is the historic-usage factor applied to its weight.
     */
    public record QueueShare(
            String name,
            String parent,
            int weight,
            boolean reclaimable,
            String state,
            int guaranteeGpus,
            Integer capabilityGpus,
            Integer maxRunningGpus,
            double deservedGpus,
            double deservedCpuMillis,
            double deservedMemoryMiB,
            long allocatedGpus,
            long pendingGpus,
            double usageFactor) {
    }
}
