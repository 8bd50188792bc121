package dev.gantry.testing;

import io.smallrye.jwt.build.Jwt;
import io.smallrye.jwt.build.JwtClaimsBuilder;
import java.util.Set;

/**
 * Bearer tokens of each of Gantry's roles, signed with the test key pair in this module's
 * {@code jwt/} (every service's {@code %test} profile verifies with its public half and signs with
 * {@code smallrye.jwt.sign.key.location}). Issuer {@code gantry}, audience {@code gantry}, ten minutes.
 * Role claims: {@code gantry_role} (and {@code gantry_node} for agents), as docs/security.md describes.
 */
public final class TestTokens {

    public static final String ISSUER = "gantry";
    public static final String AUDIENCE = "gantry";

    private TestTokens() {
    }

    /** A user in these teams (the token's groups); no role claim. */
    public static String user(String user, String... teams) {
        return base(user).groups(Set.of(teams)).sign();
    }

    /** An admin (claim gantry_role=admin). */
    public static String admin() {
        return base("root").claim("gantry_role", "admin").sign();
    }

    /** The node agent of {@code node} (gantry_role=agent, gantry_node=node). */
    public static String agent(String node) {
        return base("agent:" + node).claim("gantry_role", "agent").claim("gantry_node", node).sign();
    }

    /** A Gantry service (gantry_role=service), as admission signs for itself. */
    public static String service() {
        return base("admission-service").claim("gantry_role", "service").sign();
    }

    /** Issuer, audience, subject, ten minutes; add claims and sign. */
    public static JwtClaimsBuilder base(String subject) {
        return Jwt.issuer(ISSUER).audience(AUDIENCE).subject(subject).expiresIn(600);
    }
}
