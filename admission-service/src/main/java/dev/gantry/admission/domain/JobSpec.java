package dev.gantry.admission.domain;

import dev.gantry.contracts.jobs.JobQueued.Network;
import dev.gantry.contracts.jobs.JobQueued.Toleration;
import dev.gantry.contracts.resources.MigProfile;
import dev.gantry.contracts.validation.DnsName;
import dev.gantry.contracts.validation.FieldViolation;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What a user asked for: the pending job of the scenario format (FORMAT.md) plus its queue, team,
 * priority class, labels and what each task group runs. {@link #violations} names every field that
 * is wrong, so the API can refuse an invalid spec before anything is stored.
 *
 * @param team          the team the job is charged to; null lets admission pick the submitter's only team
 * @param priorityClass a priority class name known to quota-service, or null for its default
 */
public record JobSpec(
        String name,
        String queue,
        String team,
        String priorityClass,
        int priority,
        Integer minAvailable,
        List<TaskGroupSpec> taskGroups,
        List<String> gpuModels,
        String gpuTopology,
        Network network,
        boolean requireInfiniBand,
        Map<String, String> nodeSelector,
        List<Toleration> tolerations,
        boolean preemptible,
        boolean checkpointable,
        Integer checkpointGraceSeconds,
        Long estimatedRuntimeSeconds,
        Map<String, String> labels,
        boolean migratable) {

    /** Not migratable (the default). */
    public JobSpec(String name, String queue, String team, String priorityClass, int priority, Integer minAvailable,
            List<TaskGroupSpec> taskGroups, List<String> gpuModels, String gpuTopology, Network network, boolean requireInfiniBand,
            Map<String, String> nodeSelector, List<Toleration> tolerations, boolean preemptible, boolean checkpointable,
            Integer checkpointGraceSeconds, Long estimatedRuntimeSeconds, Map<String, String> labels) {
        this(name, queue, team, priorityClass, priority, minAvailable, taskGroups, gpuModels, gpuTopology, network, requireInfiniBand,
                nodeSelector, tolerations, preemptible, checkpointable, checkpointGraceSeconds, estimatedRuntimeSeconds, labels, false);
    }

    public static final int MAX_PODS = 10_000;
    /** A million cores for one pod: far above any machine, far below where totals overflow. */
    public static final long MAX_CPU_MILLIS_PER_POD = 1_000_000_000L;
    /** 1 PiB for one pod, as above. */
    public static final long MAX_MEMORY_MIB_PER_POD = 1L << 30;
    public static final long MAX_RUNTIME_SECONDS = 365L * 24 * 3600;
    /** As Kubernetes' user PriorityClass values (larger ones are reserved for the system). */
    public static final int MAX_PRIORITY = 1_000_000_000;
    public static final int MAX_GRACE_SECONDS = 24 * 3600;
    static final Set<String> GPU_TOPOLOGIES = Set.of("nvlink", "numa", "any");
    static final Set<String> NETWORK_LEVELS = Set.of("any", "node", "leaf", "spine", "zone");

    public JobSpec {
        taskGroups = List.copyOf(taskGroups);
        gpuModels = gpuModels == null ? List.of() : List.copyOf(gpuModels);
        nodeSelector = nodeSelector == null ? Map.of() : Map.copyOf(nodeSelector);
        tolerations = tolerations == null ? List.of() : List.copyOf(tolerations);
        labels = labels == null ? Map.of() : Map.copyOf(labels);
    }

    public JobSpec withTeam(String chosenTeam) {
        return new JobSpec(name, queue, chosenTeam, priorityClass, priority, minAvailable, taskGroups, gpuModels, gpuTopology,
                network, requireInfiniBand, nodeSelector, tolerations, preemptible, checkpointable, checkpointGraceSeconds,
                estimatedRuntimeSeconds, labels, migratable);
    }

    /** The same job, migratable or not (an annotation on a manifest says so). */
    public JobSpec withMigratable(boolean moveAllowed) {
        return new JobSpec(name, queue, team, priorityClass, priority, minAvailable, taskGroups, gpuModels, gpuTopology,
                network, requireInfiniBand, nodeSelector, tolerations, preemptible, checkpointable, checkpointGraceSeconds,
                estimatedRuntimeSeconds, labels, moveAllowed);
    }

    public int totalReplicas() {
        return taskGroups.stream().mapToInt(TaskGroupSpec::replicas).sum();
    }

    public int totalGpus() {
        return taskGroups.stream().mapToInt(TaskGroupSpec::gpus).sum();
    }

    /** Within the bounds {@link #quantityViolations} checks this cannot overflow; beyond them it throws, never wraps. */
    public long totalCpuMillis() {
        return taskGroups.stream().mapToLong(g -> Math.multiplyExact((long) g.replicas(), g.cpuMillis())).reduce(0, Math::addExact);
    }

    /** As {@link #totalCpuMillis}. */
    public long totalMemoryMiB() {
        return taskGroups.stream().mapToLong(g -> Math.multiplyExact((long) g.replicas(), g.memoryMiB())).reduce(0, Math::addExact);
    }

    /**
     * Numbers out of their range (400, whichever way the job came: JSON, Volcano YAML, gRPC), so that
     * every total the job is charged with stays far from overflowing. Empty when all are in range.
     */
    public List<FieldViolation> quantityViolations() {
        List<FieldViolation> errors = new ArrayList<>();
        for (int i = 0; i < taskGroups.size(); i++) {
            TaskGroupSpec group = taskGroups.get(i);
            String at = "taskGroups[" + i + "]";
            if (group.cpuMillis() < 0 || group.cpuMillis() > MAX_CPU_MILLIS_PER_POD) {
                errors.add(new FieldViolation(at + ".cpuMillis", "must be 0.." + MAX_CPU_MILLIS_PER_POD + " per replica"));
            }
            if (group.memoryMiB() < 0 || group.memoryMiB() > MAX_MEMORY_MIB_PER_POD) {
                errors.add(new FieldViolation(at + ".memoryMiB", "must be 0.." + MAX_MEMORY_MIB_PER_POD + " per replica"));
            }
            if (group.replicas() < 1 || group.replicas() > MAX_PODS) {
                errors.add(new FieldViolation(at + ".replicas", "must be 1.." + MAX_PODS));
            }
        }
        if (taskGroups.size() > MAX_PODS) {
            errors.add(new FieldViolation("taskGroups", "a job has at most " + MAX_PODS + " task groups"));
        }
        if (priority < -MAX_PRIORITY || priority > MAX_PRIORITY) {
            errors.add(new FieldViolation("priority", "must be " + -MAX_PRIORITY + ".." + MAX_PRIORITY
                    + " (0: the queue's default; above it only as the queue allows)"));
        }
        if (estimatedRuntimeSeconds != null && (estimatedRuntimeSeconds < 1 || estimatedRuntimeSeconds > MAX_RUNTIME_SECONDS)) {
            errors.add(new FieldViolation("estimatedRuntimeSeconds", "must be 1.." + MAX_RUNTIME_SECONDS + " (a year)"));
        }
        if (checkpointGraceSeconds != null && (checkpointGraceSeconds < 0 || checkpointGraceSeconds > MAX_GRACE_SECONDS)) {
            errors.add(new FieldViolation("checkpointGraceSeconds", "must be 0.." + MAX_GRACE_SECONDS));
        }
        return errors;
    }

    /** Domain rules beyond field syntax; empty when valid. */
    public List<FieldViolation> violations() {
        List<FieldViolation> errors = new ArrayList<>();
        DnsName.check(errors, "name", name);
        DnsName.check(errors, "queue", queue);
        if (team != null) {
            DnsName.check(errors, "team", team);
        }
        if (taskGroups.isEmpty()) {
            errors.add(new FieldViolation("taskGroups", "a job needs at least one task group"));
        }
        Set<String> seen = new HashSet<>();
        for (int i = 0; i < taskGroups.size(); i++) {
            TaskGroupSpec group = taskGroups.get(i);
            String at = "taskGroups[" + i + "]";
            DnsName.check(errors, at + ".name", group.name());
            if (group.name() != null && !seen.add(group.name())) {
                errors.add(new FieldViolation(at + ".name", "duplicate task group name " + group.name()));
            }
            if (group.replicas() < 1 || group.replicas() > MAX_PODS) {
                errors.add(new FieldViolation(at + ".replicas", "must be 1.." + MAX_PODS));
            }
            if (group.gpusPerReplica() < 0 || group.gpusPerReplica() > 64) {
                errors.add(new FieldViolation(at + ".gpusPerReplica", "must be 0..64"));
            }
            if (group.gpuMilli() != null && (group.gpuMilli() < 1 || group.gpuMilli() > 999)) {
                errors.add(new FieldViolation(at + ".gpuMilli", "must be 1..999"));
            }
            if (group.gpuMilli() != null && group.gpusPerReplica() != 1) {
                errors.add(new FieldViolation(at + ".gpusPerReplica", "must be 1 when gpuMilli is set"));
            }
            migViolations(errors, at, group);
            if (group.cpuMillis() < 0) {
                errors.add(new FieldViolation(at + ".cpuMillis", "must be 0 or more"));
            }
            if (group.memoryMiB() < 0) {
                errors.add(new FieldViolation(at + ".memoryMiB", "must be 0 or more"));
            }
            TaskEnvironment.check(errors, at, group.workingDir(), group.env());
        }
        if (totalReplicas() > MAX_PODS) {
            errors.add(new FieldViolation("taskGroups", "a job has at most " + MAX_PODS + " pods, this one has " + totalReplicas()));
        }
        if (minAvailable != null && (minAvailable < 1 || minAvailable > totalReplicas())) {
            errors.add(new FieldViolation("minAvailable", "must be 1.." + totalReplicas() + " (the number of replicas)"));
        }
        if (gpuTopology != null && !GPU_TOPOLOGIES.contains(gpuTopology)) {
            errors.add(new FieldViolation("gpuTopology", "must be one of nvlink, numa, any"));
        }
        if (network != null) {
            checkLevel(errors, "network.required", network.required());
            checkLevel(errors, "network.preferred", network.preferred());
        }
        for (int i = 0; i < tolerations.size(); i++) {
            if (tolerations.get(i).key() == null || tolerations.get(i).key().isBlank()) {
                errors.add(new FieldViolation("tolerations[" + i + "].key", "is required"));
            }
        }
        if (checkpointGraceSeconds != null && checkpointGraceSeconds < 0) {
            errors.add(new FieldViolation("checkpointGraceSeconds", "must be 0 or more"));
        }
        if (estimatedRuntimeSeconds != null && estimatedRuntimeSeconds <= 0) {
            errors.add(new FieldViolation("estimatedRuntimeSeconds", "must be greater than 0"));
        }
        if (migratable && !checkpointable) {
            // a move stops the job and starts it elsewhere: without a checkpoint it would start over
            errors.add(new FieldViolation("migratable", "a migratable job must be checkpointable (set checkpointable: true)"));
        }
        return errors;
    }

    /**
     * A MIG request: a profile as NVIDIA spells it, one or more devices per replica, no GPU share beside it,
     * and no NVLink or NUMA wish (a MIG device has neither).
     */
    private void migViolations(List<FieldViolation> errors, String at, TaskGroupSpec group) {
        if (group.migProfile() == null) {
            return;
        }
        if (!MigProfile.valid(group.migProfile())) {
            errors.add(new FieldViolation(at + ".migProfile", "must be a MIG profile as NVIDIA names them, such as 1g.10gb, 3g.40gb or "
                    + "1g.10gb+me (<compute slices>g.<memory>gb), not '" + group.migProfile() + "'"));
        } else if (group.gpuMilli() != null) {
            errors.add(new FieldViolation(at + ".migProfile", "a task group asks for MIG devices or a share of a GPU (gpuMilli), not both"));
        } else if (group.gpusPerReplica() < 1) {
            errors.add(new FieldViolation(at + ".gpusPerReplica", "must be 1..64 (MIG devices per replica) when migProfile is set"));
        } else if ("nvlink".equals(gpuTopology) || "numa".equals(gpuTopology)) {
            errors.add(new FieldViolation(at + ".migProfile", "MIG devices have no NVLink island or NUMA node to choose: leave gpuTopology out "
                    + "(or any) for a job with MIG task groups"));
        }
    }

    private static void checkLevel(List<FieldViolation> errors, String field, String level) {
        if (level != null && !NETWORK_LEVELS.contains(level)) {
            errors.add(new FieldViolation(field, "must be one of any, node, leaf, spine, zone"));
        }
    }
}
