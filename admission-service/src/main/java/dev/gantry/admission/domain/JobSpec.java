package dev.gantry.admission.domain;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * What a user asked for. {@link #violations} names every field that is wrong, so the API can refuse
 * an invalid spec before anything is stored.
 */
public record JobSpec(String name, String queue, int priority, Integer minAvailable, List<TaskGroupSpec> taskGroups) {

    /** The limits of the scenario format (FORMAT.md): DNS names, replicas, GPUs per replica. */
    static final String DNS_NAME = "[a-z0-9]([-a-z0-9.]*[a-z0-9])?";

    public int totalReplicas() {
        return taskGroups.stream().mapToInt(TaskGroupSpec::replicas).sum();
    }

    public int totalGpus() {
        return taskGroups.stream().mapToInt(TaskGroupSpec::gpus).sum();
    }

    /** Domain rules beyond field syntax; empty when valid. */
    public List<Violation> violations() {
        List<Violation> errors = new ArrayList<>();
        checkName(errors, "name", name);
        checkName(errors, "queue", queue);
        Set<String> seen = new HashSet<>();
        for (int i = 0; i < taskGroups.size(); i++) {
            TaskGroupSpec group = taskGroups.get(i);
            String at = "taskGroups[" + i + "]";
            checkName(errors, at + ".name", group.name());
            if (group.name() != null && !seen.add(group.name())) {
                errors.add(new Violation(at + ".name", "duplicate task group name " + group.name()));
            }
            if (group.gpuMilli() != null && group.gpusPerReplica() != 1) {
                errors.add(new Violation(at + ".gpusPerReplica", "must be 1 when gpuMilli is set"));
            }
        }
        if (totalReplicas() > 10_000) {
            errors.add(new Violation("taskGroups", "a job has at most 10000 pods, this one has " + totalReplicas()));
        }
        if (minAvailable != null && minAvailable > totalReplicas()) {
            errors.add(new Violation("minAvailable", "must be at most the number of replicas (" + totalReplicas() + ")"));
        }
        return errors;
    }

    private static void checkName(List<Violation> errors, String field, String value) {
        if (value == null || value.length() > 253 || !value.matches(DNS_NAME)) {
            errors.add(new Violation(field, "must be a lowercase DNS subdomain name ([a-z0-9]([-a-z0-9.]*[a-z0-9])?, at most 253 characters)"));
        }
    }
}
