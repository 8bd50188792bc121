package dev.gantry.placement.engine.validation;

import dev.gantry.placement.engine.domain.Migration;
import dev.gantry.placement.engine.domain.Node;
import dev.gantry.placement.engine.domain.PendingJob;
import dev.gantry.placement.engine.domain.Placement;
import dev.gantry.placement.engine.domain.Plan;
import dev.gantry.placement.engine.domain.Preemption;
import dev.gantry.placement.engine.domain.RunningJob;
import dev.gantry.placement.engine.domain.RunningTask;
import dev.gantry.placement.engine.domain.Scenario;
import dev.gantry.placement.engine.domain.TaskPlacement;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/** The quality figures of {@code check_plan.py}, computed the same way (valid plans assumed). */
public record PlanMetrics(
        int placedJobs,
        double placedGpus,
        double priorityGpus,
        double netPriorityGpus,
        int preemptedJobs,
        double preemptedGpus,
        int migratedTasks,
        int freeWholeNodes,
        double strandedGpus,
        int preferredNetworkMet,
        double avgNodesPerMultiNodeJob) {

    public static PlanMetrics of(Scenario sc, Plan plan) {
        Map<String, Node> nodes = new HashMap<>();
        sc.nodes().forEach(n -> nodes.put(n.name(), n));
        Map<String, PendingJob> pending = new HashMap<>();
        sc.pending().forEach(j -> pending.put(j.name(), j));
        Map<String, RunningJob> running = new HashMap<>();
        sc.running().forEach(j -> running.put(j.name(), j));
        Set<String> preempted = new HashSet<>(plan.preemptions().stream().map(Preemption::job).toList());
        Map<String, Migration> migrations = new HashMap<>();
        plan.migrations().forEach(m -> migrations.put(m.job(), m));

        Map<String, Set<Integer>> used = new HashMap<>();
        Map<String, Integer> shared = new HashMap<>();
        for (RunningJob j : sc.running()) {
            if (preempted.contains(j.name())) {
                continue;
            }
            Migration m = migrations.get(j.name());
            if (m != null) {
                Map<String, RunningTask> old = new HashMap<>();
                j.tasks().forEach(t -> old.put(t.name(), t));
                for (TaskPlacement t : m.tasks()) {
                    RunningTask o = old.get(t.task());
                    occupy(used, shared, t.node(), t.gpus(), o == null ? null : o.gpuMilli());
                }
            } else {
                j.tasks().forEach(t -> occupy(used, shared, t.node(), t.gpus(), t.gpuMilli()));
            }
        }
        double placedGpus = 0;
        double priorityGpus = 0;
        int prefMet = 0;
        int placedJobs = 0;
        int multi = 0;
        int multiNodes = 0;
        for (Placement p : plan.placements()) {
            PendingJob j = pending.get(p.job());
            if (j == null) {
                continue;
            }
            placedJobs++;
            double g = 0;
            Map<String, Node> distinct = new LinkedHashMap<>();
            for (TaskPlacement t : p.tasks()) {
                occupy(used, shared, t.node(), t.gpus(), t.gpuMilli());
                g += t.gpus().size() * (t.gpuMilli() == null ? 1.0 : t.gpuMilli() / 1000.0);
                if (!t.migDevices().isEmpty() && j.taskGroupOf(t.task()) != null && j.taskGroupOf(t.task()).migProfile() != null) {
                    g += j.taskGroupOf(t.task()).replicaGpuMilli() / 1000.0; // MIG devices: their slices of seven
                }
                Node n = nodes.get(t.node());
                if (n != null) {
                    distinct.put(n.name(), n);
                }
            }
            placedGpus += g;
            priorityGpus += g * (1 + j.priority() / 1000.0);
            if (j.network().preferred() != null && PlanValidator.networkOk(j.network().preferred(), distinct.values())) {
                prefMet++;
            }
            if (distinct.size() > 1) {
                multi++;
                multiNodes += distinct.size();
            }
        }
        double preemptedGpus = 0;
        double preemptedPriority = 0;
        for (String name : preempted) {
            RunningJob j = running.get(name);
            if (j != null) {
                double g = j.gpuMilli() / 1000.0;
                preemptedGpus += g;
                preemptedPriority += g * (1 + j.priority() / 1000.0);
            }
        }
        int freeWhole = 0;
        double stranded = 0;
        for (Node n : sc.nodes()) {
            if (!n.schedulable() || n.gpus() == 0) {
                continue;
            }
            Set<Integer> u = new HashSet<>(used.getOrDefault(n.name(), Set.of()));
            for (var d : n.migDevices()) {
                u.add(d.gpu()); // a GPU in MIG mode is neither free nor stranded: only its MIG devices are given out
            }
            for (int g = 0; g < n.gpus(); g++) {
                int s = shared.getOrDefault(n.name() + "/" + g, 0);
                if (s > 0 && s < 1000) {
                    stranded += (1000 - s) / 1000.0;
                }
            }
            int free = n.gpus() - u.size();
            if (free == n.gpus()) {
                freeWhole++;
            } else {
                stranded += free;
            }
        }
        int migratedTasks = plan.migrations().stream().mapToInt(m -> m.tasks().size()).sum();
        return new PlanMetrics(placedJobs, round(placedGpus), round(priorityGpus), round(priorityGpus - preemptedPriority),
                preempted.size(), round(preemptedGpus), migratedTasks, freeWhole, round(stranded), prefMet,
                multi == 0 ? 0 : round((double) multiNodes / multi));
    }

    private static void occupy(Map<String, Set<Integer>> used, Map<String, Integer> shared, String node, List<Integer> gpus, Integer milli) {
        Set<Integer> u = used.computeIfAbsent(node, k -> new HashSet<>());
        for (int g : gpus) {
            u.add(g);
            if (milli != null) {
                shared.merge(node + "/" + g, milli, Integer::sum);
            }
        }
    }

    private static double round(double x) {
        return Math.round(x * 1000) / 1000.0;
    }
}
