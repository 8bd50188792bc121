package dev.gantry.quota.domain;

import dev.gantry.contracts.validation.DnsName;
import dev.gantry.contracts.validation.FieldViolation;
import java.util.ArrayList;
import java.util.List;

/**
 * A queue in the tree (root, org, team): how much it weighs against its siblings, what it is
 * guaranteed, what it may never exceed, and whether GPUs it borrows may be taken back.
 *
 * @param capabilityGpus null means unbounded
 */
public record QueueSpec(String name, String parent, int weight, int guaranteeGpus, Integer capabilityGpus,
        boolean reclaimable, QueueState state) {

    public enum QueueState { OPEN, CLOSED }

    /** Rules of one queue on its own; the tree's rules (parent exists, no cycle) need the other queues. */
    public List<FieldViolation> violations() {
        List<FieldViolation> errors = new ArrayList<>();
        DnsName.check(errors, "name", name);
        if (parent != null) {
            DnsName.check(errors, "parent", parent);
            if (parent.equals(name)) {
                errors.add(new FieldViolation("parent", "a queue cannot be its own parent"));
            }
        }
        if (weight <= 0) {
            errors.add(new FieldViolation("weight", "must be greater than 0"));
        }
        if (guaranteeGpus < 0) {
            errors.add(new FieldViolation("guaranteeGpus", "must be 0 or more"));
        }
        if (capabilityGpus != null && capabilityGpus < 0) {
            errors.add(new FieldViolation("capabilityGpus", "must be 0 or more"));
        }
        if (capabilityGpus != null && guaranteeGpus > capabilityGpus) {
            errors.add(new FieldViolation("guaranteeGpus", "must not exceed capabilityGpus (" + capabilityGpus + ")"));
        }
        return errors;
    }
}
