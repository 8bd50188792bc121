package dev.gantry.quota.service;

import dev.gantry.quota.domain.Amounts;
import dev.gantry.quota.domain.PriorityClassSpec;
import dev.gantry.quota.domain.QueueSpec;
import dev.gantry.quota.persistence.AllocationEntity;
import dev.gantry.quota.persistence.NodeCapacityEntity;
import dev.gantry.quota.persistence.PendingJobEntity;
import dev.gantry.quota.persistence.QueueUsageEntity;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** Everything the quota decisions read, loaded in one session. */
public record QuotaSnapshot(List<QueueSpec> queues, List<PriorityClassSpec> priorityClasses, List<AllocationEntity> allocations,
        List<PendingJobEntity> pending, List<NodeCapacityEntity> nodes, List<QueueUsageEntity> usage) {

    public Map<String, Amounts> allocatedByQueue() {
        Map<String, Amounts> out = new HashMap<>();
        allocations.forEach(a -> out.merge(a.queue, new Amounts(a.gpus, a.cpuMillis, a.memoryMiB), Amounts::plus));
        return out;
    }

    public Map<String, Amounts> pendingByQueue() {
        Map<String, Amounts> out = new HashMap<>();
        pending.forEach(p -> out.merge(p.queue, new Amounts(p.gpus, p.cpuMillis, p.memoryMiB), Amounts::plus));
        return out;
    }

    public Map<String, Long> pendingJobCountByQueue() {
        Map<String, Long> out = new HashMap<>();
        pending.forEach(p -> out.merge(p.queue, 1L, Long::sum));
        return out;
    }

    public Map<String, Map<String, Long>> allocatedGpusByQueueAndModel() {
        Map<String, Map<String, Long>> out = new HashMap<>();
        allocations.forEach(a -> out.computeIfAbsent(a.queue, q -> new HashMap<>())
                .merge(a.gpuModel == null ? "unknown" : a.gpuModel, (long) a.gpus, Long::sum));
        return out;
    }
}
