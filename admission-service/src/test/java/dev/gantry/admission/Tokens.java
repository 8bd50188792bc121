package dev.gantry.admission;

import io.smallrye.jwt.build.Jwt;
import java.util.Arrays;
import java.util.HashSet;
import java.util.Set;

/** Bearer tokens signed with the test key pair (src/test/resources/jwt). */
final class Tokens {

    private Tokens() {
    }

    static String of(String user, String... groups) {
        return Jwt.issuer("gantry").subject(user).groups(new HashSet<>(Arrays.asList(groups))).expiresIn(600).sign();
    }

    static String admin() {
        return Jwt.issuer("gantry").subject("root").groups(Set.of("admin")).expiresIn(600).sign();
    }
}
