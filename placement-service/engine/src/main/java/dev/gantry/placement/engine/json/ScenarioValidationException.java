package dev.gantry.placement.engine.json;

import java.util.List;

/** A scenario rejected whole; {@link #getMessage()} is the first violation on one line. */
public class ScenarioValidationException extends RuntimeException {
    private final transient List<Violation> violations;

    public ScenarioValidationException(List<Violation> violations) {
        super(summary(violations));
        this.violations = List.copyOf(violations);
    }

    public List<Violation> violations() {
        return violations;
    }

    private static String summary(List<Violation> violations) {
        if (violations.isEmpty()) {
            return "invalid scenario";
        }
        String first = violations.getFirst().toString().replace('\n', ' ');
        return violations.size() == 1 ? first : first + " (and " + (violations.size() - 1) + " more)";
    }
}
