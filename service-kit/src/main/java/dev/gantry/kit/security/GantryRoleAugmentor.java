package dev.gantry.kit.security;

import io.quarkus.security.identity.AuthenticationRequestContext;
import io.quarkus.security.identity.SecurityIdentity;
import io.quarkus.security.identity.SecurityIdentityAugmentor;
import io.quarkus.security.runtime.QuarkusSecurityIdentity;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import org.eclipse.microprofile.jwt.JsonWebToken;

/**
 * Gives a verified token exactly one role, from {@link GantryRoles#ROLE_CLAIM}, and drops the roles
 * smallrye-jwt derives from {@code groups}: teams are not roles, so {@code @RolesAllowed("admin")}
 * never admits a member of a team (or an identity provider group) called {@code admin}.
 */
@ApplicationScoped
public class GantryRoleAugmentor implements SecurityIdentityAugmentor {

    @Override
    public Uni<SecurityIdentity> augment(SecurityIdentity identity, AuthenticationRequestContext context) {
        if (identity.isAnonymous() || !(identity.getPrincipal() instanceof JsonWebToken token)) {
            return Uni.createFrom().item(identity);
        }
        QuarkusSecurityIdentity.Builder roles = QuarkusSecurityIdentity.builder()
                .setPrincipal(token)
                .addCredentials(identity.getCredentials())
                .addAttributes(identity.getAttributes());
        GantryRoles.of(token).ifPresent(roles::addRole);
        return Uni.createFrom().item(roles.build());
    }
}
