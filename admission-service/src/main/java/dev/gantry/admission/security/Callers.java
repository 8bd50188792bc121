package dev.gantry.admission.security;

import dev.gantry.admission.domain.Caller;
import io.quarkus.security.UnauthorizedException;
import jakarta.enterprise.context.RequestScoped;
import jakarta.inject.Inject;
import java.util.HashSet;
import java.util.Set;
import org.eclipse.microprofile.jwt.JsonWebToken;

/**
 * The {@link Caller} of the current request, from its bearer token: {@code sub} is the user,
 * {@code groups} the teams; the group {@value #ADMIN} makes an admin and is not a team.
 */
@RequestScoped
public class Callers {

    public static final String ADMIN = "admin";

    @Inject
    JsonWebToken token;

    /** The caller; {@link UnauthorizedException} when the request carries no valid bearer token. */
    public Caller current() {
        if (token.getRawToken() == null) {
            throw new UnauthorizedException("a bearer token is required");
        }
        Set<String> teams = new HashSet<>(token.getGroups());
        boolean admin = teams.remove(ADMIN);
        String user = token.getSubject() != null ? token.getSubject() : token.getName();
        return new Caller(user, teams, admin);
    }
}
