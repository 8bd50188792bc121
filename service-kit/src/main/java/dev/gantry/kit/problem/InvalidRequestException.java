package dev.gantry.kit.problem;

import dev.gantry.contracts.validation.FieldViolation;
import java.util.List;

/**
 * A request that is well-formed JSON but asks for something the domain refuses (HTTP 422), or is
 * malformed in a way bean validation cannot see (HTTP 400). Thrown before anything is stored.
 */
public class InvalidRequestException extends RuntimeException {

    private final int status;
    private final List<Problem.FieldError> errors;

    public InvalidRequestException(int status, String detail, List<Problem.FieldError> errors) {
        super(detail);
        this.status = status;
        this.errors = List.copyOf(errors);
    }

    /** The domain refuses the request for these reasons (HTTP 422); the first one is the detail line. */
    public static InvalidRequestException unprocessable(List<FieldViolation> violations) {
        if (violations.isEmpty()) {
            throw new IllegalArgumentException("an unprocessable request needs at least one violation");
        }
        return new InvalidRequestException(422, violations.getFirst().toString(),
                violations.stream().map(v -> new Problem.FieldError(v.field(), v.message())).toList());
    }

    public static InvalidRequestException unprocessable(String field, String message) {
        return new InvalidRequestException(422, field + ": " + message, List.of(new Problem.FieldError(field, message)));
    }

    /** Fields out of their range or unreadable (HTTP 400); the first one is the detail line. */
    public static InvalidRequestException badRequest(List<FieldViolation> violations) {
        if (violations.isEmpty()) {
            throw new IllegalArgumentException("a bad request needs at least one violation");
        }
        return new InvalidRequestException(400, violations.getFirst().toString(),
                violations.stream().map(v -> new Problem.FieldError(v.field(), v.message())).toList());
    }

    public static InvalidRequestException badRequest(String field, String message) {
        return new InvalidRequestException(400, field + ": " + message, List.of(new Problem.FieldError(field, message)));
    }

    public int status() {
        return status;
    }

    public List<Problem.FieldError> errors() {
        return errors;
    }
}
