package dev.gantry.admission.domain;

import dev.gantry.contracts.validation.DnsName;
import dev.gantry.contracts.validation.FieldViolation;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * What a user asked for. {@link #violations} names every field that is wrong, so the API can refuse
 * an invalid spec before anything is stored.
 */
public record JobSpec(String name, String queue, int priority, Integer minAvailable, List<TaskGroupSpec> taskGroups) {

    public int totalReplicas() {
        return taskGroups.stream().mapToInt(TaskGroupSpec::replicas).sum();
    }

    public int totalGpus() {
        return taskGroups.stream().mapToInt(TaskGroupSpec::gpus).sum();
    }

    /** Domain rules beyond field syntax; empty when valid. */
    public List<FieldViolation> violations() {
        List<FieldViolation> errors = new ArrayList<>();
        DnsName.check(errors, "name", name);
        DnsName.check(errors, "queue", queue);
        Set<String> seen = new HashSet<>();
        for (int i = 0; i < taskGroups.size(); i++) {
            TaskGroupSpec group = taskGroups.get(i);
            String at = "taskGroups[" + i + "]";
            DnsName.check(errors, at + ".name", group.name());
            if (group.name() != null && !seen.add(group.name())) {
                errors.add(new FieldViolation(at + ".name", "duplicate task group name " + group.name()));
            }
            if (group.gpuMilli() != null && group.gpusPerReplica() != 1) {
                errors.add(new FieldViolation(at + ".gpusPerReplica", "must be 1 when gpuMilli is set"));
            }
        }
        if (totalReplicas() > 10_000) {
            errors.add(new FieldViolation("taskGroups", "a job has at most 10000 pods, this one has " + totalReplicas()));
        }
        if (minAvailable != null && minAvailable > totalReplicas()) {
            errors.add(new FieldViolation("minAvailable", "must be at most the number of replicas (" + totalReplicas() + ")"));
        }
        return errors;
    }
}
