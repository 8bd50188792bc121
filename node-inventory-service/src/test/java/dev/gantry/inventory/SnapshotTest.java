package dev.gantry.inventory;

import static dev.gantry.inventory.Nodes.DGX;
import static dev.gantry.inventory.Nodes.put;
import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.hasItem;

import dev.gantry.testing.TestDatabase;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import org.junit.jupiter.api.Test;

/** {@code GET /v1/snapshot}: schedulable Ready nodes, a version that only grows, ETag and If-None-Match. */
@QuarkusTest
class SnapshotTest {

    @Inject
    TestDatabase db;

    @Test
    void theVersionIsTheEtagAndAnUnchangedSnapshotIsNotModified() {
        put("snap-01", DGX).statusCode(200);
        var first = given().when().get("/v1/snapshot").then().statusCode(200)
                .body("nodes.name", hasItem("snap-01")).extract();
        long version = first.jsonPath().getLong("version");
        assertThat(first.header("ETag")).isEqualTo("\"" + version + "\"");
        assertThat(version).isEqualTo(Nodes.version(db));

        given().header("If-None-Match", "\"" + version + "\"").when().get("/v1/snapshot").then().statusCode(304);
        given().header("If-None-Match", "W/\"" + version + "\", \"1\"").when().get("/v1/snapshot").then().statusCode(304);
        put("snap-01", DGX).statusCode(200);
        given().header("If-None-Match", "\"" + version + "\"").when().get("/v1/snapshot").then()
                .statusCode(304);

        put("snap-01", DGX.replace("224000", "200000")).statusCode(200);
        given().header("If-None-Match", "\"" + version + "\"").when().get("/v1/snapshot").then().statusCode(200)
                .header("ETag", containsString(Long.toString(version + 1)))
                .body("version", equalTo((int) version + 1));
    }
}
