package dev.gantry.kit.security;

import java.util.Optional;
import java.util.Set;
import org.eclipse.microprofile.jwt.JsonWebToken;

/**
 * The roles of Gantry's bearer tokens and how a token says which it has (docs/security.md).
 *
 * <p>A token's role is the claim {@value #ROLE_CLAIM}, which only Gantry's issuer puts there:
 * {@value #ADMIN}, {@value #AGENT} (with {@value #NODE_CLAIM}, the one node it speaks for) or
 * {@value #SERVICE}. A token without the claim is a {@value #USER}'s, whose {@code groups} are their
 * teams. Groups never grant a role: an identity provider's group named {@code admin} is a team
 * like any other.
 */
public final class GantryRoles {

    /** The claim naming the role; absent on a user's token. */
    public static final String ROLE_CLAIM = "gantry_role";
    /** The node an agent token speaks for. */
    public static final String NODE_CLAIM = "gantry_node";

    /** A person, in the teams of the token's {@code groups}. */
    public static final String USER = "user";
    /** Administers the cluster: queues, priority classes, user limits, nodes, cluster files, dry-run plans. */
    public static final String ADMIN = "admin";
    /** A node agent: registers, updates and heartbeats its own node only. */
    public static final String AGENT = "agent";
    /** One Gantry service calling another (admission's quota checks and console reads). */
    public static final String SERVICE = "service";

    /** The values {@value #ROLE_CLAIM} may take; any other value gives the token no role at all. */
    public static final Set<String> CLAIMED = Set.of(ADMIN, AGENT, SERVICE);

    private GantryRoles() {
    }

    /** The token's role: {@value #USER} without the claim, empty for a value Gantry does not know. */
    public static Optional<String> of(JsonWebToken token) {
        Object claim = token.getClaim(ROLE_CLAIM);
        if (claim == null) {
            return Optional.of(USER);
        }
        String role = text(claim);
        return role != null && CLAIMED.contains(role) ? Optional.of(role) : Optional.empty();
    }

    /** The node of an agent token; empty on any other token or when the claim is missing. */
    public static Optional<String> nodeOf(JsonWebToken token) {
        if (!of(token).equals(Optional.of(AGENT))) {
            return Optional.empty();
        }
        String node = text(token.getClaim(NODE_CLAIM));
        return node == null || node.isBlank() ? Optional.empty() : Optional.of(node);
    }

    /** A string claim, whether the JWT library hands it over as a String or a JSON string. */
    private static String text(Object claim) {
        if (claim instanceof String s) {
            return s;
        }
        if (claim instanceof jakarta.json.JsonString s) {
            return s.getString();
        }
        return null;
    }
}
