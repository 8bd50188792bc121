package dev.gantry.inventory;

import static dev.gantry.inventory.Nodes.DGX;
import static dev.gantry.inventory.Nodes.version;
import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.hasItem;
import static org.hamcrest.Matchers.startsWith;

import dev.gantry.testing.TestDatabase;
import dev.gantry.testing.TestTokens;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import io.restassured.specification.RequestSpecification;
import jakarta.inject.Inject;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Who may change the inventory (issue 19, item 1): without a token 401, with the wrong role 403,
 * both problem+json and nothing changed; an agent writes only its own node and never takes over a
 * node that came from Kubernetes (409); admins cordon, remove and apply cluster files.
 */
@QuarkusTest
class NodeAuthorizationTest {

    private static final String CLUSTER_FILE = """
            {"format": "gantry-scenario/v1", "name": "authz", "nodes": [{"name": "authz-file-01", "gpuModel": "L4", "gpus": 4}]}
            """;

    @Inject
    TestDatabase db;

    @BeforeEach
    void twoAgentNodes() {
        Nodes.put("authz-a", DGX).statusCode(200);
        Nodes.put("authz-b", DGX).statusCode(200);
    }

    private static RequestSpecification as(String token) {
        return token == null ? given() : given().auth().oauth2(token);
    }

    private String row(String name) {
        return db.queryString("select source || ' ' || cordoned || ' ' || gpu_model || ' ' || leaf from node where name = ?", name);
    }

    /** Every change of authz-b the inventory offers, tried with {@code token}; each must get {@code status} as problem+json. */
    private void everyChangeOfBIsRefused(String token, int status) {
        long version = version(db);
        long outbox = db.queryLong("select count(*) from outbox_event");
        String before = row("authz-b");
        as(token).contentType(ContentType.JSON).body(DGX.replace("A100-SXM4-80GB", "H100-FORGED")).when().put("/v1/nodes/authz-b")
                .then().statusCode(status).contentType(startsWith("application/problem+json")).body("status", equalTo(status));
        as(token).contentType(ContentType.JSON).body(DGX).when().put("/v1/nodes/authz-new")
                .then().statusCode(status).contentType(startsWith("application/problem+json"));
        as(token).when().post("/v1/nodes/authz-b:cordon").then().statusCode(status).contentType(startsWith("application/problem+json"));
        as(token).when().delete("/v1/nodes/authz-b").then().statusCode(status).contentType(startsWith("application/problem+json"));
        as(token).contentType(ContentType.JSON).body(CLUSTER_FILE).when().post("/v1/cluster:apply")
                .then().statusCode(status).contentType(startsWith("application/problem+json"));

        assertThat(row("authz-b")).isEqualTo(before).startsWith("AGENT false A100-SXM4-80GB");
        assertThat(db.queryLong("select count(*) from node where name in ('authz-new', 'authz-file-01')")).isZero();
        assertThat(version(db)).isEqualTo(version);
        assertThat(db.queryLong("select count(*) from outbox_event")).isEqualTo(outbox);
    }

    @Test
    void withoutATokenNothingChanges401() {
        everyChangeOfBIsRefused(null, 401);
        as(null).when().post("/v1/nodes/authz-b/heartbeat").then().statusCode(401).header("WWW-Authenticate", startsWith("Bearer"));
        as(null).when().get("/v1/nodes").then().statusCode(401).contentType(startsWith("application/problem+json"));
        as(null).when().get("/v1/snapshot").then().statusCode(401);
        as("not-a-token").when().get("/v1/nodes").then().statusCode(401).contentType(startsWith("application/problem+json"));
        as(null).when().get("/q/health/ready").then().statusCode(200);
    }

    @Test
    void usersAndServicesMayReadButNotChange403() {
        everyChangeOfBIsRefused(TestTokens.user("alice", "vision"), 403);
        everyChangeOfBIsRefused(TestTokens.user("eve", "admin"), 403);
        everyChangeOfBIsRefused(TestTokens.service(), 403);
        as(TestTokens.user("alice", "vision")).when().get("/v1/nodes?limit=500").then().statusCode(200).body("items.name", hasItem("authz-b"));
        as(TestTokens.user("alice", "vision")).when().get("/v1/nodes/authz-b").then().statusCode(200);
        as(TestTokens.service()).when().get("/v1/nodes?limit=500").then().statusCode(200);
        as(TestTokens.service()).when().get("/v1/snapshot").then().statusCode(200);
        as(TestTokens.user("alice", "vision")).when().get("/v1/snapshot").then().statusCode(403);
    }

    @Test
    void anAgentOfNodeAMayNotTouchNodeB403() {
        String agentA = TestTokens.agent("authz-a");
        everyChangeOfBIsRefused(agentA, 403);
        as(agentA).when().post("/v1/nodes/authz-b/heartbeat").then().statusCode(403).contentType(startsWith("application/problem+json"));
        as(agentA).when().get("/v1/nodes/authz-b").then().statusCode(403);
        as(agentA).when().get("/v1/nodes").then().statusCode(403);
        // an agent token that names no node speaks for none
        String nodeless = TestTokens.base("agent:?").claim("gantry_role", "agent").sign();
        as(nodeless).contentType(ContentType.JSON).body(DGX).when().put("/v1/nodes/authz-b").then().statusCode(403);
        // its own node it may update, heartbeat and read, but not cordon or delete
        as(agentA).contentType(ContentType.JSON).body(DGX.replace("\"lf1\"", "\"lf9\"")).when().put("/v1/nodes/authz-a")
                .then().statusCode(200).body("topology.leaf", equalTo("lf9"));
        as(agentA).when().post("/v1/nodes/authz-a/heartbeat").then().statusCode(200);
        as(agentA).when().get("/v1/nodes/authz-a").then().statusCode(200);
        as(agentA).when().post("/v1/nodes/authz-a:cordon").then().statusCode(403);
        as(agentA).when().delete("/v1/nodes/authz-a").then().statusCode(403);
        assertThat(row("authz-a")).isEqualTo("AGENT false A100-SXM4-80GB lf9");
    }

    @Test
    void theAgentApiDoesNotTakeOverANodeFromKubernetes409() {
        // as the informer leaves a node it registered (KubernetesInformerTest covers the informer itself)
        Nodes.put("authz-kube", DGX).statusCode(200);
        db.execute("update node set source = 'KUBERNETES' where name = 'authz-kube'");
        long version = version(db);
        long outbox = db.queryLong("select count(*) from outbox_event");

        for (String token : new String[] {TestTokens.agent("authz-kube"), TestTokens.admin()}) {
            as(token).contentType(ContentType.JSON).body(DGX.replace("\"lf1\"", "\"lf9\"")).when().put("/v1/nodes/authz-kube")
                    .then().statusCode(409).contentType(startsWith("application/problem+json"))
                    .body("detail", startsWith("node authz-kube comes from Kubernetes"));
            as(token).when().post("/v1/nodes/authz-kube/heartbeat").then().statusCode(409);
        }
        assertThat(row("authz-kube")).isEqualTo("KUBERNETES false A100-SXM4-80GB lf1");
        assertThat(version(db)).isEqualTo(version);
        assertThat(db.queryLong("select count(*) from outbox_event")).isEqualTo(outbox);
    }

    @Test
    void adminsCordonRemoveAndApplyClusterFiles() {
        String admin = TestTokens.admin();
        as(admin).when().post("/v1/nodes/authz-b:cordon").then().statusCode(200).body("cordoned", equalTo(true));
        as(admin).contentType(ContentType.JSON).body(CLUSTER_FILE).when().post("/v1/cluster:apply").then().statusCode(200)
                .body("added", hasItem("authz-file-01"));
        as(admin).when().delete("/v1/nodes/authz-b").then().statusCode(204);
        assertThat(row("authz-b")).isNull();
        as(admin).contentType(ContentType.JSON).body("{\"format\": \"gantry-scenario/v1\", \"name\": \"authz\", \"nodes\": []}")
                .when().post("/v1/cluster:apply").then().statusCode(200).body("removed", hasItem("authz-file-01"));
    }
}
