package dev.gantry.contracts.validation;

/**
 * One rule a request breaks: the field, as a JSON path ({@code taskGroups[1].replicas}), and what is
 * wrong with it. Domain validators return these; the REST edge turns them into problem+json.
 */
public record FieldViolation(String field, String message) {

    @Override
    public String toString() {
        return field + ": " + message;
    }
}
