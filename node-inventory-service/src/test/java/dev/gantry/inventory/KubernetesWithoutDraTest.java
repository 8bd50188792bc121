package dev.gantry.inventory;

import static io.restassured.RestAssured.given;
import static org.awaitility.Awaitility.await;
import static org.hamcrest.Matchers.equalTo;

import dev.gantry.inventory.kubernetes.KubernetesNodeMapperTest;
import dev.gantry.testing.TestTokens;
import io.fabric8.kubernetes.api.model.NodeListBuilder;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.quarkus.test.kubernetes.client.KubernetesServer;
import io.quarkus.test.kubernetes.client.WithKubernetesTestServer;
import java.time.Duration;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/**
 * A cluster without the {@code resource.k8s.io/v1} API (before Kubernetes 1.34): listing ResourceSlices is a 404.
 * The service still starts and describes its nodes from their device-plugin labels.
 */
@QuarkusTest
@WithKubernetesTestServer(crud = false, setup = KubernetesWithoutDraTest.NoDraApi.class)
@TestProfile(KubernetesInformerTest.KubernetesEnabled.class)
class KubernetesWithoutDraTest {

    public static class NoDraApi implements Consumer<KubernetesServer> {
        @Override
        public void accept(KubernetesServer server) {
            server.expect().get().withPath("/apis/resource.k8s.io/v1/resourceslices?resourceVersion=0").andReturn(404, "").always();
            server.expect().get().withPath("/api/v1/nodes?resourceVersion=0")
                    .andReturn(200, new NodeListBuilder().withNewMetadata().withResourceVersion("1").endMetadata()
                            .addToItems(KubernetesNodeMapperTest.dgxA100("k8s-old-01")).build()).always();
            server.expect().get().withPath("/api/v1/nodes?allowWatchBookmarks=true&resourceVersion=1&timeoutSeconds=600&watch=true")
                    .andUpgradeToWebSocket().open().done().always();
        }
    }

    @Test
    void nodesAreDescribedFromTheirLabels() {
        await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> given().auth().oauth2(TestTokens.admin()).when().get("/v1/nodes/k8s-old-01")
                .then().statusCode(200).body("gpus", equalTo(8)).body("gpuModel", equalTo("NVIDIA-A100-SXM4-80GB")));
    }
}
