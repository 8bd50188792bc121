package dev.gantry.kit.problem;

import com.fasterxml.jackson.annotation.JsonInclude;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import java.util.List;

/**
 * An RFC 9457 problem document. {@code errors} lists every field that was wrong, so a client can
 * fix its request in one go instead of one round trip per mistake.
 */
@JsonInclude(JsonInclude.Include.NON_EMPTY)
public record Problem(String type, String title, int status, String detail, String instance, List<FieldError> errors) {

    public static final String MEDIA_TYPE = "application/problem+json";
    public static final MediaType PROBLEM_JSON = MediaType.valueOf(MEDIA_TYPE);

    /** One thing wrong with a request: a JSON path-like field name and what is wrong with it. */
    public record FieldError(String field, String message) {
    }

    public static Problem of(Response.Status status, String detail) {
        return new Problem("about:blank", status.getReasonPhrase(), status.getStatusCode(), detail, null, List.of());
    }

    public static Problem of(int status, String title, String detail, List<FieldError> errors) {
        return new Problem("about:blank", title, status, detail, null, errors);
    }

    public Response toResponse() {
        return Response.status(status).type(PROBLEM_JSON).entity(this).build();
    }
}
