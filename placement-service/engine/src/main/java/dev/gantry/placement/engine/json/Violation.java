package dev.gantry.placement.engine.json;

/** One broken rule of an input document: the JSON path of the field and what is wrong with it. */
public record Violation(String field, String message) {
    @Override
    public String toString() {
        return field + ": " + message;
    }
}
