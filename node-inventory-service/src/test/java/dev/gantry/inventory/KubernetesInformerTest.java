package dev.gantry.inventory;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.hamcrest.Matchers.equalTo;

import dev.gantry.inventory.kubernetes.KubernetesNodeMapperTest;
import dev.gantry.inventory.kubernetes.NodeInformer;
import dev.gantry.testing.TestDatabase;
import dev.gantry.testing.TestTokens;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import io.quarkus.test.kubernetes.client.KubernetesServer;
import io.quarkus.test.kubernetes.client.KubernetesTestServer;
import io.quarkus.test.kubernetes.client.WithKubernetesTestServer;
import jakarta.inject.Inject;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The Kubernetes source against the fabric8 mock API server in CRUD mode: add, relabel, cordon, delete Nodes;
 * the GPU driver's ResourceSlices. After each test every request the service made is checked against the
 * RBAC rules declared in application.properties (the test's own client has a user agent of its own).
 */
@QuarkusTest
@WithKubernetesTestServer(crud = true)
@TestProfile(KubernetesInformerTest.KubernetesEnabled.class)
class KubernetesInformerTest {

    public static class KubernetesEnabled implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of("gantry.inventory.kubernetes.enabled", "true");
        }
    }

    @KubernetesTestServer
    KubernetesServer server;

    @Inject
    TestDatabase db;

    @Inject
    NodeInformer informer;

    private static final String TEST_AGENT = "gantry-inventory-test-driver";
    private KubernetesClient driver;

    @org.junit.jupiter.api.BeforeEach
    void driver() {
        driver = new io.fabric8.kubernetes.client.KubernetesClientBuilder().withConfig(new io.fabric8.kubernetes.client.ConfigBuilder(
                server.getClient().getConfiguration()).withUserAgent(TEST_AGENT).build()).build();
    }

    @org.junit.jupiter.api.AfterEach
    void everyServiceRequestIsAllowedByTheRbacRules() throws Exception {
        java.util.Properties p = new java.util.Properties();
        try (java.io.InputStream in = getClass().getClassLoader().getResourceAsStream("application.properties")) {
            p.load(in);
        }
        java.util.List<java.util.List<java.util.List<String>>> rules = new java.util.ArrayList<>();
        String prefix = "quarkus.kubernetes.rbac.cluster-roles.node-reader.policy-rules.";
        for (int i = 0; p.containsKey(prefix + i + ".verbs"); i++) {
            rules.add(java.util.List.of(split(p.getProperty(prefix + i + ".api-groups", "")), split(p.getProperty(prefix + i + ".resources")),
                    split(p.getProperty(prefix + i + ".verbs"))));
        }
        for (io.fabric8.mockwebserver.http.RecordedRequest r; (r = server.getKubernetesMockServer().takeRequest(50,
                java.util.concurrent.TimeUnit.MILLISECONDS)) != null;) {
            if (TEST_AGENT.equals(r.getHeader("User-Agent"))) {
                continue;
            }
            String path = r.getPath().replaceFirst("\\?.*", "");
            String[] s = path.replaceFirst("^/", "").split("/");
            String group = s[0].equals("api") ? "" : s[1];
            int at = s[0].equals("api") ? 2 : 3;
            String resource = s[at];
            String verb = switch (r.getMethod()) {
                case "GET" -> at + 1 < s.length ? "get" : r.getPath().contains("watch=true") ? "watch" : "list";
                default -> r.getMethod().toLowerCase(java.util.Locale.ROOT);
            };
            SEEN.add(group + "/" + resource + " " + verb);
            assertThat(rules).as("%s %s is allowed by a rule of node-reader", r.getMethod(), r.getPath())
                    .anyMatch(rule -> rule.get(0).contains(group) && rule.get(1).contains(resource) && rule.get(2).contains(verb));
        }
        driver.close();
    }

    private static final java.util.Set<String> SEEN = java.util.concurrent.ConcurrentHashMap.newKeySet();

    /** The ResourceSlice rights declared are the ones used (least privilege). */
    @org.junit.jupiter.api.AfterAll
    static void theSliceRightsWereUsed() {
        assertThat(SEEN).contains("resource.k8s.io/resourceslices list", "resource.k8s.io/resourceslices watch");
    }

    private static java.util.List<String> split(String s) {
        return java.util.Arrays.stream(s.split(",", -1)).map(String::trim).toList();
    }

    @Test
    void nodesFollowTheApiServer() {
        assertThat(informer.watching()).isTrue();
        KubernetesClient client = driver;
        client.nodes().resource(KubernetesNodeMapperTest.dgxA100("k8s-dgx-01")).create();

        await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> given().auth().oauth2(TestTokens.admin()).when().get("/v1/nodes/k8s-dgx-01").then()
                .statusCode(200)
                .body("gpuModel", equalTo("NVIDIA-A100-SXM4-80GB"))
                .body("gpus", equalTo(8))
                .body("topology.leaf", equalTo("lf1"))
                .body("numaNodes.size()", equalTo(2))
                .body("health", equalTo("READY"))
                .body("schedulable", equalTo(true)));
        assertThat(db.queryString("select source from node where name = 'k8s-dgx-01'")).isEqualTo("KUBERNETES");
        long upserts = Nodes.events(db, "nodes.upserted", "k8s-dgx-01");
        assertThat(upserts).isEqualTo(1);

        client.nodes().withName("k8s-dgx-01").edit(n -> new NodeBuilder(n).editMetadata()
                .addToLabels("nvidia.com/gpu.product", "NVIDIA-H100-80GB-HBM3")
                .addToAnnotations("gantry.dev/leaf", "lf9").endMetadata().build());
        await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> given().auth().oauth2(TestTokens.admin()).when().get("/v1/nodes/k8s-dgx-01").then()
                .body("gpuModel", equalTo("NVIDIA-H100-80GB-HBM3"))
                .body("topology.leaf", equalTo("lf9")));

        client.nodes().withName("k8s-dgx-01").edit(n -> new NodeBuilder(n).editSpec().withUnschedulable(true).endSpec().build());
        await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> given().auth().oauth2(TestTokens.admin()).when().get("/v1/nodes/k8s-dgx-01").then()
                .body("schedulable", equalTo(false)));
        given().auth().oauth2(TestTokens.admin()).when().get("/v1/snapshot").then().body("nodes.name", org.hamcrest.Matchers.not(org.hamcrest.Matchers.hasItem("k8s-dgx-01")));
        assertThat(Nodes.events(db, "nodes.upserted", "k8s-dgx-01")).isEqualTo(upserts + 2);

        // a status-only edit that maps to the same node is a no-op: no event
        client.nodes().withName("k8s-dgx-01").edit(n -> new NodeBuilder(n).editMetadata()
                .addToAnnotations("unrelated.example.com/touched", "yes").endMetadata().build());
        client.nodes().resource(KubernetesNodeMapperTest.dgxA100("k8s-dgx-02")).create();
        await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> given().auth().oauth2(TestTokens.admin()).when().get("/v1/nodes/k8s-dgx-02").then().statusCode(200));
        assertThat(Nodes.events(db, "nodes.upserted", "k8s-dgx-01")).isEqualTo(upserts + 2);

        client.nodes().withName("k8s-dgx-01").delete();
        await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> given().auth().oauth2(TestTokens.admin()).when().get("/v1/nodes/k8s-dgx-01").then().statusCode(404));
        assertThat(Nodes.events(db, "nodes.removed", "k8s-dgx-01")).isEqualTo(1);
    }

    /** The GPU driver's ResourceSlices describe the node while they exist; without them its device-plugin labels do. */
    @Test
    void aNodeIsDescribedFromItsDriversResourceSlices() {
        KubernetesClient client = driver;
        Node node = KubernetesNodeMapperTest.dgxA100("k8s-dra-01");
        // the device plugin's view: two GPUs, no memory label; the islands and NUMA annotations go (they name 8 GPUs)
        node.getMetadata().getLabels().put("nvidia.com/gpu.count", "2");
        node.getMetadata().getLabels().remove("nvidia.com/gpu.memory");
        node.getMetadata().getAnnotations().remove("gantry.dev/nvlink-islands");
        node.getMetadata().getAnnotations().remove("gantry.dev/numa");
        client.nodes().resource(node).create();
        await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> given().auth().oauth2(TestTokens.admin()).when().get("/v1/nodes/k8s-dra-01").then()
                .statusCode(200).body("gpus", equalTo(2)).body("gpuMemoryMiB", equalTo(0)));

        client.resources(io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice.class)
                .resource(dev.gantry.inventory.kubernetes.NvidiaDraSlices.h100Node("k8s-dra-01", false)).create();
        await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> given().auth().oauth2(TestTokens.admin()).when().get("/v1/nodes/k8s-dra-01").then()
                .body("gpus", equalTo(8))
                .body("gpuModel", equalTo("NVIDIA-A100-SXM4-80GB")) // GFD's label, where there is one, names the model
                .body("gpuMemoryMiB", equalTo(81920))
                .body("gpuSharing", equalTo(true)));

        client.resources(io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice.class)
                .withName("k8s-dra-01-gpu.nvidia.com-g1").delete();
        await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> given().auth().oauth2(TestTokens.admin()).when().get("/v1/nodes/k8s-dra-01").then()
                .body("gpus", equalTo(2))
                .body("gpuSharing", equalTo(false)));
    }

    @Test
    void aNodeWithABadAnnotationIsSkippedAndOthersStillFlow() {
        KubernetesClient client = driver;
        Node bad = KubernetesNodeMapperTest.dgxA100("k8s-bad-01");
        bad.getMetadata().getAnnotations().put("gantry.dev/nvlink-islands", "0-3;3-7");
        client.nodes().resource(bad).create();
        Node badCount = KubernetesNodeMapperTest.dgxA100("k8s-bad-02");
        badCount.getMetadata().getLabels().put("nvidia.com/gpu.count", "99");
        client.nodes().resource(badCount).create();
        client.nodes().resource(KubernetesNodeMapperTest.dgxA100("k8s-good-01")).create();

        await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> given().auth().oauth2(TestTokens.admin()).when().get("/v1/nodes/k8s-good-01").then().statusCode(200));
        given().auth().oauth2(TestTokens.admin()).when().get("/v1/nodes/k8s-bad-01").then().statusCode(404);
        given().auth().oauth2(TestTokens.admin()).when().get("/v1/nodes/k8s-bad-02").then().statusCode(404);
        assertThat(Nodes.events(db, "nodes.upserted", "k8s-bad-01")).isZero();
    }
}
