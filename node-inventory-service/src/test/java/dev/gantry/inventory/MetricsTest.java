package dev.gantry.inventory;

import static dev.gantry.inventory.Nodes.DGX;
import static dev.gantry.inventory.Nodes.put;
import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.containsString;

import dev.gantry.inventory.metrics.InventoryMetrics;
import dev.gantry.testing.TestTokens;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.vertx.VertxContextSupport;
import jakarta.inject.Inject;
import org.junit.jupiter.api.Test;

@QuarkusTest
class MetricsTest {

    @Inject
    InventoryMetrics metrics;

    @Test
    void nodesAndGpusAreCountedByModelAndState() throws Throwable {
        put("metrics-01", DGX.replace("A100-SXM4-80GB", "METRICS-GPU")).statusCode(200);
        put("metrics-02", DGX.replace("A100-SXM4-80GB", "METRICS-GPU")).statusCode(200);
        given().auth().oauth2(TestTokens.admin()).when().post("/v1/nodes/metrics-02:cordon").then().statusCode(200);
        VertxContextSupport.subscribeAndAwait(() -> metrics.refresh());

        given().when().get("/q/metrics").then().statusCode(200)
                .body(containsString("gantry_inventory_gpus{model=\"METRICS-GPU\",state=\"ready\"} 8.0"))
                .body(containsString("gantry_inventory_gpus{model=\"METRICS-GPU\",state=\"cordoned\"} 8.0"))
                .body(containsString("gantry_inventory_nodes{model=\"METRICS-GPU\",state=\"ready\"} 1.0"))
                .body(containsString("gantry_inventory_heartbeat_age_max_seconds"));
    }
}
