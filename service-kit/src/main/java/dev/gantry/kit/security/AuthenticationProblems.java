package dev.gantry.kit.security;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.gantry.kit.problem.Problem;
import io.quarkus.security.AuthenticationFailedException;
import io.quarkus.security.ForbiddenException;
import io.quarkus.security.UnauthorizedException;
import io.vertx.ext.web.Router;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import java.util.List;

/**
 * 401 and 403 as {@code application/problem+json}, also when they happen before any resource runs:
 * a token that does not verify (bad signature, wrong issuer or audience, expired, over the maximum
 * lifetime) fails proactive authentication in the HTTP layer, where REST exception mappers do not
 * see it. Inside REST, {@link dev.gantry.kit.problem.ProblemMappers} builds the same problems.
 */
@ApplicationScoped
public class AuthenticationProblems {

    /** After admission's console handler (order -2), which sends browsers with a stale cookie to the login page. */
    static final int ORDER = -1;

    private static final ObjectMapper JSON = new ObjectMapper();

    public static Problem unauthorized(String detail) {
        return Problem.of(401, "Unauthorized", detail, List.of());
    }

    public static Problem forbidden(String detail) {
        return Problem.of(403, "Forbidden", detail, List.of());
    }

    void install(@Observes Router router) {
        router.route().order(ORDER).failureHandler(ctx -> {
            Throwable failure = ctx.failure();
            Throwable cause = failure != null ? failure.getCause() : null;
            Problem problem;
            if (failure instanceof AuthenticationFailedException || cause instanceof AuthenticationFailedException) {
                problem = unauthorized("the bearer token was not accepted (signature, issuer, audience, expiry or lifetime)");
            } else if (failure instanceof UnauthorizedException || cause instanceof UnauthorizedException) {
                problem = unauthorized("a bearer token is required");
            } else if (failure instanceof ForbiddenException || cause instanceof ForbiddenException) {
                problem = forbidden("this token may not do that");
            } else {
                ctx.next();
                return;
            }
            if (ctx.response().headWritten()) {
                ctx.next();
                return;
            }
            String body;
            try {
                body = JSON.writeValueAsString(problem);
            } catch (JsonProcessingException e) {
                body = "{\"status\":" + problem.status() + "}";
            }
            ctx.response().setStatusCode(problem.status()).putHeader("Content-Type", Problem.MEDIA_TYPE);
            if (problem.status() == 401) {
                ctx.response().putHeader("WWW-Authenticate", "Bearer");
            }
            ctx.response().end(body);
        });
    }
}
