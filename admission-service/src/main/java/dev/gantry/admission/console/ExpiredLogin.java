package dev.gantry.admission.console;

import dev.gantry.kit.problem.Problem;
import io.quarkus.security.AuthenticationFailedException;
import io.vertx.ext.web.Router;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;

/**
 * A console cookie whose token no longer verifies (a new signing key, a hand-edited cookie) fails
 * authentication before any page runs; instead of a bare 401 the browser is sent back to the login
 * page and the cookie is dropped. Requests without the cookie keep the API's usual 401.
 */
@ApplicationScoped
public class ExpiredLogin {

    void install(@Observes Router router) {
        // before service-kit's AuthenticationProblems (order -1), which answers everyone else's failed token
        router.route().order(-2).failureHandler(ctx -> {
            boolean authFailed = ctx.failure() instanceof AuthenticationFailedException
                    || ctx.failure() != null && ctx.failure().getCause() instanceof AuthenticationFailedException;
            if (!authFailed || ctx.request().getCookie(ConsoleResource.COOKIE) == null || ctx.response().headWritten()) {
                ctx.next();
                return;
            }
            String accept = ctx.request().getHeader("Accept");
            ctx.response().putHeader("Set-Cookie", ConsoleResource.COOKIE + "=; Path=/; Max-Age=0; HttpOnly; SameSite=Strict");
            if (accept != null && accept.contains("text/html")) {
                ctx.response().setStatusCode(303).putHeader("Location", "/login?expired=1").end();
            } else {
                ctx.response().setStatusCode(401).putHeader("Content-Type", Problem.MEDIA_TYPE)
                        .end("{\"type\":\"about:blank\",\"title\":\"Unauthorized\",\"status\":401,"
                                + "\"detail\":\"the login token was not accepted; log in again\"}");
            }
        });
    }
}
