package dev.gantry.admission;

import dev.gantry.testing.TestTokens;

/** Bearer tokens signed with the test key pair (gantry-test-support's jwt/): users by teams, admins by claim. */
final class Tokens {

    private Tokens() {
    }

    static String of(String user, String... groups) {
        return TestTokens.user(user, groups);
    }

    /** gantry_role=admin: what makes an admin (a group named admin does not). */
    static String admin() {
        return TestTokens.admin();
    }
}
