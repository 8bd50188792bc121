package dev.gantry.admission.domain;

/** One rule a request breaks: the field (as a JSON path) and what is wrong with it. */
public record Violation(String field, String message) {
}
