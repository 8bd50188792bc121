package dev.gantry.quota;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.contains;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.startsWith;

import dev.gantry.testing.TestDatabase;
import dev.gantry.testing.TestTokens;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import io.restassured.specification.RequestSpecification;
import io.smallrye.jwt.build.Jwt;
import jakarta.inject.Inject;
import java.util.Set;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Who may change quota-service (issue 19, item 1): without a token 401, with the wrong role 403,
 * both as problem+json and with nothing stored; admins change queues, priority classes, user
 * limits and imports; users read queues; only services (and admins) ask admission checks.
 */
@QuarkusTest
class QuotaAuthorizationTest {

    private static final String MEMBERS_VISION = "{\"members\": {\"teams\": [\"vision\"]}}";
    private static final String MEMBERS_MALLORY = "{\"members\": {\"teams\": [\"mallory-team\"]}}";
    private static final String IMPORT = """
            apiVersion: scheduling.volcano.sh/v1beta1
            kind: Queue
            metadata: {name: authz-imported}
            spec: {weight: 1}
            """;

    @Inject
    TestDatabase db;

    @BeforeEach
    void guardedQueue() {
        given().auth().oauth2(TestTokens.admin()).contentType(ContentType.JSON).body(MEMBERS_VISION)
                .when().put("/v1/queues/authz-guarded").then().statusCode(200);
    }

    private static RequestSpecification anonymous() {
        return given();
    }

    private static RequestSpecification as(String token) {
        return token == null ? given() : given().auth().oauth2(token);
    }

    /** Every change quota-service offers, tried with {@code token} (null: none); each must get {@code status} as problem+json. */
    private void everyChangeIsRefused(String token, int status) {
        java.util.function.Supplier<RequestSpecification> request = () -> as(token);
        request.get().contentType(ContentType.JSON).body(MEMBERS_MALLORY).when().put("/v1/queues/authz-guarded")
                .then().statusCode(status).contentType(startsWith("application/problem+json")).body("status", equalTo(status));
        request.get().when().delete("/v1/queues/authz-guarded")
                .then().statusCode(status).contentType(startsWith("application/problem+json"));
        request.get().contentType(ContentType.JSON).body("{\"weight\": 1}").when().put("/v1/queues/authz-new")
                .then().statusCode(status).contentType(startsWith("application/problem+json"));
        request.get().contentType(ContentType.JSON).body("{\"value\": 2000000, \"globalDefault\": true}")
                .when().put("/v1/priority-classes/authz-top")
                .then().statusCode(status).contentType(startsWith("application/problem+json"));
        request.get().contentType(ContentType.JSON).body("{\"maxGpusPerJob\": 1000}").when().put("/v1/user-limits/mallory")
                .then().statusCode(status).contentType(startsWith("application/problem+json"));
        request.get().contentType("application/yaml").body(IMPORT.getBytes(java.nio.charset.StandardCharsets.UTF_8)).when().post("/v1/import")
                .then().statusCode(status).contentType(startsWith("application/problem+json"));
    }

    private void nothingChanged() {
        given().auth().oauth2(TestTokens.admin()).when().get("/v1/queues/authz-guarded").then().statusCode(200)
                .body("members.teams", contains("vision"));
        assertThat(db.queryLong("select count(*) from queue where name in ('authz-new', 'authz-imported')")).isZero();
        assertThat(db.queryLong("select count(*) from priority_class where name = 'authz-top'")).isZero();
        assertThat(db.queryLong("select count(*) from user_limit where user_name = 'mallory'")).isZero();
    }

    @Test
    void withoutATokenEveryChangeIs401AndNothingChanges() {
        everyChangeIsRefused(null, 401);
        anonymous().contentType(ContentType.JSON).body(MEMBERS_MALLORY).when().put("/v1/queues/authz-guarded").then()
                .header("WWW-Authenticate", startsWith("Bearer"));
        nothingChanged();
        // reads too: nothing of quota is public but health and metrics
        anonymous().when().get("/v1/queues").then().statusCode(401).contentType(startsWith("application/problem+json"));
        anonymous().when().get("/v1/queues/authz-guarded/status").then().statusCode(401);
        anonymous().contentType(ContentType.JSON).body("{\"user\": \"u\", \"queue\": \"authz-guarded\", \"resources\": {\"gpus\": 1}}")
                .when().post("/v1/admission-checks").then().statusCode(401);
        anonymous().when().get("/q/health/ready").then().statusCode(200);
        anonymous().when().get("/q/metrics").then().statusCode(200);
    }

    @Test
    void aTokenThatDoesNotVerifyIs401AndNothingChanges() {
        String forged = TestTokens.admin().replaceFirst("\\.[^.]+$", ".c2lnbmF0dXJl");
        String otherAudience = Jwt.issuer("gantry").audience("someone-else").subject("root").claim("gantry_role", "admin")
                .expiresIn(600).sign();
        String otherIssuer = Jwt.issuer("not-gantry").audience("gantry").subject("root").claim("gantry_role", "admin")
                .expiresIn(600).sign();
        String noAudience = Jwt.issuer("gantry").subject("root").claim("gantry_role", "admin").expiresIn(600).sign();
        // valid signature, but a lifetime over the 12 h maximum (gantry.jwt.max-lifetime-seconds)
        String tooLong = TestTokens.base("root").claim("gantry_role", "admin").expiresIn(13 * 3600).sign();
        for (String bad : new String[] {"not-a-token", forged, otherAudience, otherIssuer, noAudience, tooLong}) {
            everyChangeIsRefused(bad, 401);
        }
        nothingChanged();
        // the same signer with a lifetime within the maximum is fine
        as(TestTokens.base("root").claim("gantry_role", "admin").expiresIn(11 * 3600).sign())
                .when().get("/v1/queues/authz-guarded").then().statusCode(200);
    }

    @Test
    void usersAgentsAndServicesMayNotChangeQuotaOnly403() {
        everyChangeIsRefused(TestTokens.user("alice", "vision"), 403);
        everyChangeIsRefused(TestTokens.agent("dgx-01"), 403);
        everyChangeIsRefused(TestTokens.service(), 403);
        // an identity provider's group called admin is a team, not the admin role
        everyChangeIsRefused(TestTokens.user("eve", "admin"), 403);
        everyChangeIsRefused(TestTokens.base("eve").groups(Set.of("admin")).claim("gantry_role", "superuser").sign(), 403);
        nothingChanged();
    }

    @Test
    void usersReadQueuesAndTheirOwnLimitsOnly() {
        String alice = TestTokens.user("alice", "vision");
        as(alice).when().get("/v1/queues").then().statusCode(200);
        as(alice).when().get("/v1/queues/authz-guarded").then().statusCode(200).body("members.teams", contains("vision"));
        as(alice).when().get("/v1/queues/authz-guarded/status").then().statusCode(200);
        as(alice).when().get("/v1/priority-classes").then().statusCode(200);
        given().auth().oauth2(TestTokens.admin()).contentType(ContentType.JSON).body("{\"maxGpusPerJob\": 8}")
                .when().put("/v1/user-limits/alice").then().statusCode(200);
        as(alice).when().get("/v1/user-limits/alice").then().statusCode(200).body("maxGpusPerJob", equalTo(8));
        as(TestTokens.user("bob", "vision")).when().get("/v1/user-limits/alice").then().statusCode(403)
                .contentType(startsWith("application/problem+json"));
        as(alice).when().get("/v1/user-limits").then().statusCode(403);
        // the admission check is admission's (a service) to ask, not a user's
        as(alice).contentType(ContentType.JSON).body("{\"user\": \"alice\", \"queue\": \"authz-guarded\", \"resources\": {\"gpus\": 1}}")
                .when().post("/v1/admission-checks").then().statusCode(403).contentType(startsWith("application/problem+json"));
        as(TestTokens.service()).contentType(ContentType.JSON)
                .body("{\"user\": \"alice\", \"teams\": [\"vision\"], \"queue\": \"authz-guarded\", \"resources\": {\"gpus\": 1}}")
                .when().post("/v1/admission-checks").then().statusCode(200);
    }

    @Test
    void adminsChangeEverything() {
        String admin = TestTokens.admin();
        as(admin).contentType(ContentType.JSON).body(MEMBERS_MALLORY).when().put("/v1/queues/authz-guarded").then().statusCode(200);
        as(admin).when().get("/v1/queues/authz-guarded").then().statusCode(200).body("members.teams", contains("mallory-team"));
        as(admin).contentType("application/yaml").body(IMPORT.getBytes(java.nio.charset.StandardCharsets.UTF_8)).when().post("/v1/import").then().statusCode(200);
        as(admin).contentType(ContentType.JSON).body("{\"value\": 100}").when().put("/v1/priority-classes/authz-low").then().statusCode(200);
        as(admin).when().delete("/v1/priority-classes/authz-low").then().statusCode(204);
        as(admin).when().delete("/v1/queues/authz-imported").then().statusCode(204);
        assertThat(db.queryLong("select count(*) from queue where name = 'authz-imported'")).isZero();
    }
}
