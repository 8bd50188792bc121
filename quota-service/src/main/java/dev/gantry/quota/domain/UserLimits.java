package dev.gantry.quota.domain;

import dev.gantry.contracts.validation.FieldViolation;
import java.util.ArrayList;
import java.util.List;

/** Limits on one user across all queues; null: no limit of that kind. */
public record UserLimits(String user, Integer maxGpusPerJob, Integer maxPendingJobs) {

    public List<FieldViolation> violations() {
        List<FieldViolation> errors = new ArrayList<>();
        if (user == null || user.isBlank() || user.length() > 253) {
            errors.add(new FieldViolation("user", "must be 1..253 characters"));
        }
        if (maxGpusPerJob != null && maxGpusPerJob < 0) {
            errors.add(new FieldViolation("maxGpusPerJob", "must be 0 or more"));
        }
        if (maxPendingJobs != null && maxPendingJobs < 0) {
            errors.add(new FieldViolation("maxPendingJobs", "must be 0 or more"));
        }
        return errors;
    }
}
