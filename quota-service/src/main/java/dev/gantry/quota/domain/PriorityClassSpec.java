package dev.gantry.quota.domain;

import dev.gantry.contracts.validation.DnsName;
import dev.gantry.contracts.validation.FieldViolation;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

/**
 * A named job priority, as Kubernetes' {@code PriorityClass}: its value (larger runs first), whether
 * its jobs may preempt lower ones, and whether it is the default for jobs that name none.
 */
public record PriorityClassSpec(String name, int value, PreemptionPolicy preemptionPolicy, boolean globalDefault, String description,
        List<String> queues, List<String> teams) {

    /** A class any queue and team may use. */
    public PriorityClassSpec(String name, int value, PreemptionPolicy preemptionPolicy, boolean globalDefault, String description) {
        this(name, value, preemptionPolicy, globalDefault, description, List.of(), List.of());
    }

    public enum PreemptionPolicy { PreemptLowerPriority, Never }

    /** Kubernetes reserves values above one billion for system classes. */
    public static final int MAX_USER_VALUE = 1_000_000_000;

    public PriorityClassSpec {
        preemptionPolicy = preemptionPolicy == null ? PreemptionPolicy.PreemptLowerPriority : preemptionPolicy;
        queues = queues == null ? List.of() : List.copyOf(queues);
        teams = teams == null ? List.of() : List.copyOf(teams);
    }

    /** Whether a job of these teams may use the class in a queue with this path to the root (empty lists: anyone, anywhere). */
    public boolean allows(List<String> queuePathToRoot, List<String> jobTeams) {
        boolean queueAllowed = queues.isEmpty() || queuePathToRoot.stream().anyMatch(queues::contains);
        boolean teamAllowed = teams.isEmpty() || jobTeams.stream().anyMatch(teams::contains);
        return queueAllowed && teamAllowed;
    }

    public List<FieldViolation> violations() {
        List<FieldViolation> errors = new ArrayList<>();
        DnsName.check(errors, "name", name);
        if (value < -MAX_USER_VALUE) {
            errors.add(new FieldViolation("value", "must be at least " + -MAX_USER_VALUE));
        }
        if (value > MAX_USER_VALUE) {
            errors.add(new FieldViolation("value", "must be at most " + MAX_USER_VALUE + " (larger values are reserved for system classes)"));
        }
        return errors;
    }

    /** At most one class is the default: a second one is refused, as Kubernetes does. */
    public static List<FieldViolation> defaultViolations(PriorityClassSpec candidate, Collection<PriorityClassSpec> others) {
        if (!candidate.globalDefault()) {
            return List.of();
        }
        return others.stream()
                .filter(o -> o.globalDefault() && !o.name().equals(candidate.name()))
                .map(o -> new FieldViolation("globalDefault", "'" + o.name() + "' is already the default priority class"))
                .toList();
    }
}
