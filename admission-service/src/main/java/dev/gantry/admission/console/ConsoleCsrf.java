package dev.gantry.admission.console;

import dev.gantry.kit.problem.Problem;
import jakarta.ws.rs.container.ContainerRequestContext;
import jakarta.ws.rs.container.ContainerResponseContext;
import jakarta.ws.rs.core.Cookie;
import jakarta.ws.rs.core.HttpHeaders;
import jakarta.ws.rs.core.NewCookie;
import jakarta.ws.rs.core.Response;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.jboss.resteasy.reactive.server.ServerRequestFilter;
import org.jboss.resteasy.reactive.server.ServerResponseFilter;

/**
 * Cross-site request forgery guard for the console (double submit). The browser sends the session
 * cookie with any request, even one another site makes it send; so every request that changes
 * something and is authenticated by that cookie (not by an Authorization header, which a foreign
 * page cannot add) must also carry the value of the {@value #COOKIE} cookie in the
 * {@value #HEADER} header, which only pages of this origin can read. The login and logout forms
 * carry it as the {@value #FIELD} field, checked by {@link ConsoleResource}.
 */
public class ConsoleCsrf {

    public static final String COOKIE = "gantry_csrf";
    public static final String HEADER = "X-Gantry-CSRF";
    public static final String FIELD = "csrf";
    private static final Set<String> SAFE = Set.of("GET", "HEAD", "OPTIONS");
    private static final SecureRandom RANDOM = new SecureRandom();

    /** A fresh token, 128 random bits. */
    static String newToken() {
        byte[] bytes = new byte[16];
        RANDOM.nextBytes(bytes);
        return Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
    }

    /** The cookie that holds it: readable by the console's script (it is not a credential), sent only to this site. */
    static NewCookie cookie(String token, boolean secure) {
        return new NewCookie.Builder(COOKIE).value(token).path("/").httpOnly(false).secure(secure)
                .sameSite(NewCookie.SameSite.STRICT).build();
    }

    /** Whether the submitted value matches the cookie's (in constant time). */
    static boolean matches(Cookie cookie, String submitted) {
        return cookie != null && submitted != null && !cookie.getValue().isEmpty()
                && MessageDigest.isEqual(cookie.getValue().getBytes(StandardCharsets.UTF_8), submitted.getBytes(StandardCharsets.UTF_8));
    }

    /** A session from before the console handed out tokens gets one with its next response (any page load). */
    @ServerResponseFilter
    public void handOut(ContainerRequestContext request, ContainerResponseContext response) {
        if (request.getCookies().containsKey(ConsoleResource.COOKIE) && !request.getCookies().containsKey(COOKIE)
                && !response.getHeaders().containsKey(HttpHeaders.SET_COOKIE)) {
            response.getHeaders().add(HttpHeaders.SET_COOKIE, cookie(newToken(), false));
        }
    }

    @ServerRequestFilter(preMatching = true)
    public Optional<Response> guard(ContainerRequestContext request) {
        if (SAFE.contains(request.getMethod()) || request.getHeaderString(HttpHeaders.AUTHORIZATION) != null) {
            return Optional.empty();
        }
        String path = request.getUriInfo().getPath();
        if (path.equals("/login") || path.equals("/logout")) {
            return Optional.empty(); // the form field is checked there
        }
        if (!request.getCookies().containsKey(ConsoleResource.COOKIE)) {
            return Optional.empty(); // no session cookie: nothing a forged request could borrow
        }
        if (matches(request.getCookies().get(COOKIE), request.getHeaderString(HEADER))) {
            return Optional.empty();
        }
        return Optional.of(Problem.of(403, "Forbidden", "a console request that changes something must carry the " + HEADER
                + " header (the value of the " + COOKIE + " cookie); reload the page", List.of()).toResponse());
    }
}
