package dev.gantry.admission.security;

import dev.gantry.kit.security.GantryRoles;
import io.smallrye.jwt.build.Jwt;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.jboss.logging.Logger;

/**
 * Admission's own identity towards quota, inventory and placement: a short-lived token with
 * {@code gantry_role=service}, signed with {@code smallrye.jwt.sign.key.location}, and renewed
 * when less than a minute of it is left. Short-lived, so a token that leaks from a log or a proxy
 * is soon worthless, and within the verifiers' maximum lifetime.
 */
@ApplicationScoped
public class ServiceToken {

    static final String SUBJECT = "admission-service";
    private static final Logger LOG = Logger.getLogger(ServiceToken.class);
    private static final Duration RENEW_BEFORE = Duration.ofMinutes(1);

    private final Duration lifetime;
    private final String issuer;
    private final String audience;
    private final Clock clock;
    private String current;
    private Instant expires = Instant.EPOCH;

    public ServiceToken(@ConfigProperty(name = "gantry.service-token.lifetime", defaultValue = "10m") Duration lifetime,
            @ConfigProperty(name = "mp.jwt.verify.issuer") String issuer,
            @ConfigProperty(name = "gantry.jwt.audience", defaultValue = "gantry") String audience) {
        this.lifetime = lifetime;
        this.issuer = issuer;
        this.audience = audience;
        this.clock = Clock.systemUTC();
    }

    /** The token to send now. */
    public synchronized String get() {
        Instant now = clock.instant();
        if (current == null || now.isAfter(expires.minus(RENEW_BEFORE))) {
            Instant until = now.plus(lifetime);
            try {
                current = Jwt.issuer(issuer).audience(audience).subject(SUBJECT)
                        .claim(GantryRoles.ROLE_CLAIM, GantryRoles.SERVICE)
                        .issuedAt(now).expiresAt(until).sign();
            } catch (RuntimeException e) {
                // without it every call to quota, inventory and placement is refused: say why, once per attempt
                LOG.errorf(e, "cannot sign admission's service token with the key at smallrye.jwt.sign.key.location"
                        + " (GANTRY_JWT_PRIVATE_KEY, docs/security.md)");
                throw e;
            }
            expires = until;
        }
        return current;
    }
}
