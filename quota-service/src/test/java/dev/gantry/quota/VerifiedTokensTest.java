package dev.gantry.quota;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.gantry.testing.TestTokens;
import io.quarkus.test.junit.QuarkusTest;
import io.smallrye.jwt.auth.principal.JWTParser;
import io.smallrye.jwt.auth.principal.ParseException;
import jakarta.inject.Inject;
import java.time.Instant;
import org.eclipse.microprofile.jwt.JsonWebToken;
import org.junit.jupiter.api.Test;

/**
 * A token is verified once and then remembered until it expires (issue 18 item 6: verifying every
 * request's token was a sixth of the CPU under a burst), and remembering never lets through what
 * verification would refuse: an altered token, one over the maximum lifetime; past its expiry a
 * token is verified again.
 */
@QuarkusTest
class VerifiedTokensTest {

    @Inject
    JWTParser parser;

    @Test
    void theServicesUseTheRememberingParser() {
        assertThat(parser.getClass().getName()).contains("VerifiedTokens");
    }

    @Test
    void aTokenSeenAgainIsNotVerifiedAgain() throws Exception {
        String token = TestTokens.user("tok-alice", "vision");
        JsonWebToken first = parser.parse(token);
        JsonWebToken second = parser.parse(token);
        assertThat(second).isSameAs(first);
        assertThat(second.getName()).isEqualTo("tok-alice");
    }

    @Test
    void anAlteredTokenIsVerifiedAfreshAndRefused() throws Exception {
        String token = TestTokens.user("tok-bob", "vision");
        parser.parse(token);
        // the same header and claims with another signature
        String forged = token.substring(0, token.lastIndexOf('.') + 1) + "AAAA" + token.substring(token.lastIndexOf('.') + 5);
        assertThatThrownBy(() -> parser.parse(forged)).isInstanceOf(ParseException.class);
        given().auth().oauth2(forged).when().get("/v1/queues").then().statusCode(401);
        given().auth().oauth2(token).when().get("/v1/queues").then().statusCode(200);
    }

    @Test
    void aRememberedTokenIsVerifiedAgainOnceItExpires() throws Exception {
        long exp = Instant.now().getEpochSecond() + 2;
        String token = TestTokens.base("tok-carol").groups("vision").expiresAt(exp).sign();
        JsonWebToken first = parser.parse(token);
        assertThat(parser.parse(token)).isSameAs(first);
        while (Instant.now().getEpochSecond() < exp) {
            Thread.sleep(100);
        }
        // past its exp the verifier decides again (it allows mp.jwt.verify.clock.skew, 60 s by default), never the memory
        assertThat(parser.parse(token)).isNotSameAs(first);
    }

    @Test
    void aTokenOverTheMaximumLifetimeIsNeverRemembered() {
        String token = TestTokens.base("tok-dave").groups("vision").expiresIn(7 * 24 * 3600L).sign();
        assertThatThrownBy(() -> parser.parse(token)).isInstanceOf(ParseException.class);
        assertThatThrownBy(() -> parser.parse(token)).isInstanceOf(ParseException.class);
    }
}
