package dev.gantry.kit.security;

import io.smallrye.jwt.auth.principal.DefaultJWTParser;
import io.smallrye.jwt.auth.principal.ParseException;
import jakarta.annotation.Priority;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Alternative;
import jakarta.inject.Inject;
import java.time.Clock;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.eclipse.microprofile.jwt.JsonWebToken;

/**
 * Verifies a bearer token once and remembers the result until the token expires: a client sends the
 * same token with every request (admission's service token to quota, a user's CLI token), and the
 * signature check, claims parsing and validation were a sixth of admission's and quota's CPU under a
 * burst of submissions (issue 18 item 6).
 * <p>
 * Only tokens that verified are kept, by their exact text, so a token altered in any byte is
 * verified afresh. A kept token is accepted only before its {@code exp}; issuer, audience, signature
 * and maximum lifetime do not change for a given text. Gantry has no revocation list
 * (docs/security.md), so remembering changes nothing a client can observe. Bounded: past
 * {@code gantry.jwt.verified-cache-size} entries the expired ones go, and if that is not enough, all.
 */
@Alternative
@Priority(1)
@ApplicationScoped
public class VerifiedTokens extends DefaultJWTParser {

    private record Verified(JsonWebToken token, long expiresAtSecond) {
    }

    private final Map<String, Verified> verified = new ConcurrentHashMap<>();
    private final int capacity;
    private final Clock clock;

    @Inject
    public VerifiedTokens(@ConfigProperty(name = "gantry.jwt.verified-cache-size", defaultValue = "10000") int capacity) {
        this(capacity, Clock.systemUTC());
    }

    VerifiedTokens(int capacity, Clock clock) {
        this.capacity = capacity;
        this.clock = clock;
    }

    @Override
    public JsonWebToken parse(String bearerToken) throws ParseException {
        long now = clock.instant().getEpochSecond();
        Verified known = verified.get(bearerToken);
        if (known != null && now < known.expiresAtSecond()) {
            return known.token();
        }
        JsonWebToken token = super.parse(bearerToken);
        if (capacity > 0 && token.getExpirationTime() > now) {
            if (verified.size() >= capacity) {
                verified.values().removeIf(v -> v.expiresAtSecond() <= now);
                if (verified.size() >= capacity) {
                    verified.clear();
                }
            }
            verified.put(bearerToken, new Verified(token, token.getExpirationTime()));
        }
        return token;
    }

    /** How many verified tokens are remembered now. */
    int size() {
        return verified.size();
    }
}
