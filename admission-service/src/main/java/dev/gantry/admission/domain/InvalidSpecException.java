package dev.gantry.admission.domain;

import dev.gantry.contracts.validation.FieldViolation;
import java.util.List;

/** A job description that cannot become a {@link JobSpec}; carries every reason, field by field. */
public class InvalidSpecException extends RuntimeException {

    private final List<FieldViolation> violations;

    public InvalidSpecException(List<FieldViolation> violations) {
        super(violations.isEmpty() ? "invalid job" : violations.getFirst().toString());
        this.violations = List.copyOf(violations);
    }

    public List<FieldViolation> violations() {
        return violations;
    }
}
