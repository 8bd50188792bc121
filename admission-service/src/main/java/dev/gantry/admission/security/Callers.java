package dev.gantry.admission.security;

import dev.gantry.admission.domain.Caller;
import dev.gantry.kit.security.GantryRoles;
import io.quarkus.security.ForbiddenException;
import io.quarkus.security.UnauthorizedException;
import jakarta.enterprise.context.RequestScoped;
import jakarta.inject.Inject;
import java.util.HashSet;
import java.util.Optional;
import java.util.Set;
import org.eclipse.microprofile.jwt.JsonWebToken;

/**
 * The {@link Caller} of the current request, from its bearer token: {@code sub} is the user,
 * {@code groups} the teams (all of them: a group named {@code admin} is a team like any other), and
 * the claim {@code gantry_role=admin}, which only Gantry's issuer puts in a token, makes an admin.
 * Agent and service tokens are not users: they may not use admission's user API.
 */
@RequestScoped
public class Callers {

    @Inject
    JsonWebToken token;

    /**
     * The caller; {@link UnauthorizedException} when the request carries no valid bearer token,
     * {@link ForbiddenException} when it is an agent's or a service's token, or one of an unknown role.
     */
    public Caller current() {
        if (token.getRawToken() == null) {
            throw new UnauthorizedException("a bearer token is required");
        }
        Optional<String> role = GantryRoles.of(token);
        boolean admin = role.equals(Optional.of(GantryRoles.ADMIN));
        if (!admin && !role.equals(Optional.of(GantryRoles.USER))) {
            throw new ForbiddenException("this token (" + GantryRoles.ROLE_CLAIM + "=" + token.getClaim(GantryRoles.ROLE_CLAIM)
                    + ") is not a user's or an admin's");
        }
        Set<String> teams = new HashSet<>(token.getGroups());
        String user = token.getSubject() != null ? token.getSubject() : token.getName();
        return new Caller(user, teams, admin);
    }
}
