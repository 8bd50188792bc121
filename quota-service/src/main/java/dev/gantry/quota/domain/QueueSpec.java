package dev.gantry.quota.domain;

import dev.gantry.contracts.validation.DnsName;
import dev.gantry.contracts.validation.FieldViolation;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * A queue in the tree (root, org, team): how much it weighs against its siblings, what it is
 * guaranteed (its deserved minimum), what it may never exceed (its capability), whether GPUs it
 * borrows above what it deserves may be taken back, whether it admits new jobs, who may submit
 * to it, and its admission limits.
 */
public record QueueSpec(String name, String parent, int weight, ResourceAmounts guarantee, ResourceLimits capability,
        boolean reclaimable, QueueState state, Members members, QueueLimits limits) {

    public enum QueueState { OPEN, CLOSED }

    /**
     * Who may submit: users by name, or anyone in one of the teams. Both empty: the queue defers
     * to its nearest ancestor that has a member list; with none, the queue is open to everyone.
     */
    public record Members(List<String> users, List<String> teams) {
        public static final Members ANYONE = new Members(List.of(), List.of());

        public Members {
            users = users == null ? List.of() : List.copyOf(users);
            teams = teams == null ? List.of() : List.copyOf(teams);
        }

        public boolean listsNobody() {
            return users.isEmpty() && teams.isEmpty();
        }
    }

    /**
     * Admission limits, null meaning none: {@code maxRunningGpus} caps the GPUs running in this
     * queue's subtree (the team's ResourceQuota); {@code maxGpusPerJob} and
     * {@code maxPendingJobsPerUser} apply to every user of the subtree (a LimitRange).
     * {@code defaultPriority} is the priority of a job that names none (the nearest on the path to
     * the root decides; none: the default priority class, else 0); {@code maxPriority} caps what a
     * job may ask for, as a number or through its class (none: a number may not exceed the default).
     * {@code migrationAllowed} false: jobs that ask to be migratable are refused (placement would stop
     * and move them to defragment the cluster); the nearest on the path decides, none: allowed.
     */
    public record QueueLimits(Integer maxRunningGpus, Integer maxGpusPerJob, Integer maxPendingJobsPerUser, Integer defaultPriority,
            Integer maxPriority, Boolean migrationAllowed) {
        public static final QueueLimits NONE = new QueueLimits(null, null, null, null, null, null);

        /** Without a say on migration (the nearest queue on the path that has one decides; none: allowed). */
        public QueueLimits(Integer maxRunningGpus, Integer maxGpusPerJob, Integer maxPendingJobsPerUser, Integer defaultPriority,
                Integer maxPriority) {
            this(maxRunningGpus, maxGpusPerJob, maxPendingJobsPerUser, defaultPriority, maxPriority, null);
        }

        public QueueLimits(Integer maxRunningGpus, Integer maxGpusPerJob, Integer maxPendingJobsPerUser) {
            this(maxRunningGpus, maxGpusPerJob, maxPendingJobsPerUser, null, null);
        }
    }

    public QueueSpec {
        guarantee = guarantee == null ? ResourceAmounts.ZERO : guarantee;
        capability = capability == null ? ResourceLimits.UNBOUNDED : capability;
        state = state == null ? QueueState.OPEN : state;
        members = members == null ? Members.ANYONE : members;
        limits = limits == null ? QueueLimits.NONE : limits;
    }

    /** A queue with GPU guarantee and capability only, everything else defaulted. */
    public static QueueSpec ofGpus(String name, String parent, int weight, int guaranteeGpus, Integer capabilityGpus) {
        return new QueueSpec(name, parent, weight, ResourceAmounts.ofGpus(guaranteeGpus), ResourceLimits.ofGpus(capabilityGpus),
                true, QueueState.OPEN, Members.ANYONE, QueueLimits.NONE);
    }

    /** Rules of one queue on its own; the tree's rules (parent exists, no cycle, children fit) are {@link QueueTree}'s. */
    public List<FieldViolation> violations() {
        List<FieldViolation> errors = new ArrayList<>();
        DnsName.check(errors, "name", name);
        if (parent != null) {
            DnsName.check(errors, "parent", parent);
            if (parent.equals(name)) {
                errors.add(new FieldViolation("parent", "a queue cannot be its own parent"));
            }
        }
        priorityInRange(errors, "limits.defaultPriority", limits.defaultPriority());
        priorityInRange(errors, "limits.maxPriority", limits.maxPriority());
        if (limits.defaultPriority() != null && limits.maxPriority() != null && limits.defaultPriority() > limits.maxPriority()) {
            errors.add(new FieldViolation("limits.defaultPriority", "must not be above limits.maxPriority (" + limits.maxPriority() + ")"));
        }
        if (weight <= 0) {
            errors.add(new FieldViolation("weight", "must be greater than 0"));
        }
        nonNegative(errors, "guarantee.gpus", guarantee.gpus());
        nonNegative(errors, "guarantee.cpuMillis", guarantee.cpuMillis());
        nonNegative(errors, "guarantee.memoryMiB", guarantee.memoryMiB());
        if (capability.gpus() != null) {
            nonNegative(errors, "capability.gpus", capability.gpus());
        }
        if (capability.cpuMillis() != null) {
            nonNegative(errors, "capability.cpuMillis", capability.cpuMillis());
        }
        if (capability.memoryMiB() != null) {
            nonNegative(errors, "capability.memoryMiB", capability.memoryMiB());
        }
        atMost(errors, "guarantee.gpus", guarantee.gpus(), capability.gpus(), "capability.gpus");
        atMost(errors, "guarantee.cpuMillis", guarantee.cpuMillis(), capability.cpuMillis(), "capability.cpuMillis");
        atMost(errors, "guarantee.memoryMiB", guarantee.memoryMiB(), capability.memoryMiB(), "capability.memoryMiB");
        models(errors, "guarantee", guarantee.gpusByModel());
        models(errors, "capability", capability.gpusByModel());
        int modelGuarantees = guarantee.gpusByModel().values().stream().mapToInt(Integer::intValue).sum();
        if (modelGuarantees > guarantee.gpus()) {
            errors.add(new FieldViolation("guarantee.gpusByModel",
                    "adds up to " + modelGuarantees + " GPUs, more than guarantee.gpus (" + guarantee.gpus() + ")"));
        }
        guarantee.gpusByModel().forEach((model, gpus) -> {
            Integer cap = capability.gpusByModel().getOrDefault(model, capability.gpus());
            if (cap != null && gpus > cap) {
                errors.add(new FieldViolation("guarantee.gpusByModel." + model, "must not exceed the capability for " + model + " (" + cap + ")"));
            }
        });
        capability.gpusByModel().forEach((model, gpus) -> {
            if (capability.gpus() != null && gpus > capability.gpus()) {
                errors.add(new FieldViolation("capability.gpusByModel." + model, "must not exceed capability.gpus (" + capability.gpus() + ")"));
            }
        });
        members.users().forEach(u -> {
            if (u == null || u.isBlank()) {
                errors.add(new FieldViolation("members.users", "must not contain blank names"));
            }
        });
        members.teams().forEach(t -> {
            if (t == null || t.isBlank()) {
                errors.add(new FieldViolation("members.teams", "must not contain blank names"));
            }
        });
        if (limits.maxRunningGpus() != null) {
            nonNegative(errors, "limits.maxRunningGpus", limits.maxRunningGpus());
        }
        if (limits.maxGpusPerJob() != null) {
            nonNegative(errors, "limits.maxGpusPerJob", limits.maxGpusPerJob());
        }
        if (limits.maxPendingJobsPerUser() != null) {
            nonNegative(errors, "limits.maxPendingJobsPerUser", limits.maxPendingJobsPerUser());
        }
        return errors;
    }

    private static void nonNegative(List<FieldViolation> errors, String field, long value) {
        if (value < 0) {
            errors.add(new FieldViolation(field, "must be 0 or more"));
        }
    }

    private static void atMost(List<FieldViolation> errors, String field, long value, Number bound, String boundField) {
        if (bound != null && value > bound.longValue()) {
            errors.add(new FieldViolation(field, "must not exceed " + boundField + " (" + bound + ")"));
        }
    }

    private static void models(List<FieldViolation> errors, String prefix, Map<String, Integer> byModel) {
        byModel.forEach((model, gpus) -> {
            if (model == null || model.isBlank()) {
                errors.add(new FieldViolation(prefix + ".gpusByModel", "GPU model names must not be blank"));
            } else if (gpus == null || gpus < 0) {
                errors.add(new FieldViolation(prefix + ".gpusByModel." + model, "must be 0 or more"));
            }
        });
    }

    private static void priorityInRange(List<FieldViolation> errors, String field, Integer value) {
        int bound = PriorityClassSpec.MAX_USER_VALUE;
        if (value != null && (value < -bound || value > bound)) {
            errors.add(new FieldViolation(field, "must be " + -bound + ".." + bound));
        }
    }
}
