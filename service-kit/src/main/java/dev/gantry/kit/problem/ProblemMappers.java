package dev.gantry.kit.problem;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.exc.MismatchedInputException;
import dev.gantry.kit.outbox.EventTooLargeException;
import dev.gantry.kit.security.AuthenticationProblems;
import io.quarkus.security.AuthenticationFailedException;
import io.quarkus.security.ForbiddenException;
import io.quarkus.security.UnauthorizedException;
import jakarta.validation.ConstraintViolation;
import jakarta.validation.ConstraintViolationException;
import jakarta.validation.ElementKind;
import jakarta.validation.Path;
import jakarta.ws.rs.WebApplicationException;
import jakarta.ws.rs.core.Response;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Collectors;
import org.jboss.logging.Logger;
import org.jboss.resteasy.reactive.server.ServerExceptionMapper;

/**
 * Turns every error a Gantry REST API can return into {@code application/problem+json}.
 * Registered for all services through this kit; services throw plain exceptions.
 */
public class ProblemMappers {

    private static final Logger LOG = Logger.getLogger(ProblemMappers.class);

    @ServerExceptionMapper
    public Response invalidRequest(InvalidRequestException e) {
        Response.Status known = Response.Status.fromStatusCode(e.status());
        String title = e.status() == 422 ? "Unprocessable Content" : known != null ? known.getReasonPhrase() : "Bad Request";
        return Problem.of(e.status(), title, e.getMessage(), e.errors()).toResponse();
    }

    @ServerExceptionMapper
    public Response constraintViolation(ConstraintViolationException e) {
        List<Problem.FieldError> errors = e.getConstraintViolations().stream()
                .map(v -> new Problem.FieldError(fieldOf(v), v.getMessage()))
                .sorted(Comparator.comparing(Problem.FieldError::field))
                .toList();
        String detail = errors.stream().map(f -> f.field() + ": " + f.message()).collect(Collectors.joining("; "));
        return Problem.of(400, "Bad Request", detail, errors).toResponse();
    }

    @ServerExceptionMapper(priority = 1)
    public Response unreadableJson(JsonProcessingException e) {
        String field = e instanceof JsonMappingException m ? pathOf(m) : "";
        String detail = "request body is not valid JSON for this resource: " + e.getOriginalMessage();
        List<Problem.FieldError> errors = field.isEmpty() ? List.of() : List.of(new Problem.FieldError(field, e.getOriginalMessage()));
        return Problem.of(400, "Bad Request", detail, errors).toResponse();
    }

    /** Quarkus ships its own mapper for this subtype (a JSON value of the wrong type); ours must win. */
    @ServerExceptionMapper(priority = 1)
    public Response mismatchedJson(MismatchedInputException e) {
        return unreadableJson(e);
    }

    /** No credential (or an anonymous caller on a protected endpoint): 401, nothing done. */
    @ServerExceptionMapper(priority = 1)
    public Response unauthorized(UnauthorizedException e) {
        String detail = e.getMessage() == null || e.getMessage().isBlank() ? "a bearer token is required" : e.getMessage();
        return Response.fromResponse(AuthenticationProblems.unauthorized(detail).toResponse())
                .header("WWW-Authenticate", "Bearer").build();
    }

    @ServerExceptionMapper(priority = 1)
    public Response authenticationFailed(AuthenticationFailedException e) {
        return Response.fromResponse(AuthenticationProblems.unauthorized("the bearer token was not accepted").toResponse())
                .header("WWW-Authenticate", "Bearer").build();
    }

    /** A valid token whose role may not do this: 403, nothing done. */
    @ServerExceptionMapper(priority = 1)
    public Response forbidden(ForbiddenException e) {
        String detail = e.getMessage() == null || e.getMessage().isBlank() ? "this token's role may not do that" : e.getMessage();
        return AuthenticationProblems.forbidden(detail).toResponse();
    }

    /** A change whose event the broker would refuse: nothing was stored. */
    @ServerExceptionMapper
    public Response eventTooLarge(EventTooLargeException e) {
        return Problem.of(413, "Content Too Large", "the request is too large to pass on: " + e.getMessage(), List.of()).toResponse();
    }

    @ServerExceptionMapper
    public Response webApplication(WebApplicationException e) {
        Response original = e.getResponse();
        Response.Status status = Response.Status.fromStatusCode(original.getStatus());
        String title = status != null ? status.getReasonPhrase() : "HTTP " + original.getStatus();
        return Problem.of(original.getStatus(), title, e.getMessage(), List.of()).toResponse();
    }

    @ServerExceptionMapper
    public Response unexpected(RuntimeException e) {
        LOG.error("unexpected error while serving a request", e);
        return Problem.of(Response.Status.INTERNAL_SERVER_ERROR, "an unexpected error occurred; it has been logged").toResponse();
    }

    /** "submit.request.taskGroups[0].replicas" becomes "taskGroups[0].replicas": method and parameter nodes are dropped. */
    private static String fieldOf(ConstraintViolation<?> violation) {
        StringBuilder field = new StringBuilder();
        for (Path.Node node : violation.getPropertyPath()) {
            if (node.getKind() == ElementKind.METHOD || node.getKind() == ElementKind.PARAMETER
                    || node.getKind() == ElementKind.CONSTRUCTOR || node.getKind() == ElementKind.CROSS_PARAMETER) {
                continue;
            }
            if (node.getIndex() != null) {
                field.append('[').append(node.getIndex()).append(']');
            } else if (node.getKey() != null) {
                field.append('[').append(node.getKey()).append(']');
            }
            if (node.getName() != null && node.getKind() != ElementKind.CONTAINER_ELEMENT) {
                if (!field.isEmpty()) {
                    field.append('.');
                }
                field.append(node.getName());
            }
        }
        return field.isEmpty() ? violation.getPropertyPath().toString() : field.toString();
    }

    private static String pathOf(JsonMappingException e) {
        StringBuilder path = new StringBuilder();
        for (JsonMappingException.Reference ref : e.getPath()) {
            if (ref.getFieldName() != null) {
                if (!path.isEmpty()) {
                    path.append('.');
                }
                path.append(ref.getFieldName());
            } else if (ref.getIndex() >= 0) {
                path.append('[').append(ref.getIndex()).append(']');
            }
        }
        return path.toString();
    }
}
