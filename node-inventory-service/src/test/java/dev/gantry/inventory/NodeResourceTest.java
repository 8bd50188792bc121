package dev.gantry.inventory;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.hasItem;
import static org.hamcrest.Matchers.startsWith;

import dev.gantry.testing.TestDatabase;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import jakarta.inject.Inject;
import org.junit.jupiter.api.Test;

/** The agent API against the real PostgreSQL: a registered node is stored and announced; a bad one changes nothing. */
@QuarkusTest
class NodeResourceTest {

    static final String DGX = """
            {"gpuModel": "A100-SXM4-80GB", "gpus": 8,
             "nvlinkIslands": [[0,1,2,3,4,5,6,7]], "numaNodes": [[0,1,2,3],[4,5,6,7]],
             "cpuMillis": 224000, "memoryMiB": 1900000,
             "topology": {"zone": "z1", "spine": "sp1", "leaf": "lf1"}, "ibFabric": "ib-a",
             "labels": {"nvidia.com/gpu.product": "A100-SXM4-80GB"}, "taints": []}
            """;

    @Inject
    TestDatabase db;

    @Test
    void registeredNodeIsStoredAndAnnounced() {
        given().contentType(ContentType.JSON).body(DGX)
                .when().put("/v1/nodes/dgx-01").then().statusCode(200)
                .body("schedulable", equalTo(true))
                .body("health", equalTo("READY"));

        given().when().get("/v1/nodes/dgx-01").then().statusCode(200)
                .body("topology.leaf", equalTo("lf1"))
                .body("nvlinkIslands[0].size()", equalTo(8));
        given().when().get("/v1/nodes").then().statusCode(200).body("name", hasItem("dgx-01"));
        assertThat(db.queryLong("select gpus from node where name = 'dgx-01'")).isEqualTo(8);
        assertThat(db.queryLong("select count(*) from outbox_event where subject = 'nodes.upserted' and subject_id = 'dgx-01'"))
                .isGreaterThanOrEqualTo(1);
    }

    @Test
    void overlappingIslandsAreRefusedAndNothingIsStored() {
        long nodes = db.queryLong("select count(*) from node");
        long events = db.queryLong("select count(*) from outbox_event");
        given().contentType(ContentType.JSON).body(DGX.replace("[[0,1,2,3,4,5,6,7]]", "[[0,1,2,3],[3,4,5,6,7,8]]"))
                .when().put("/v1/nodes/dgx-bad").then().statusCode(422)
                .contentType(startsWith("application/problem+json"))
                .body("errors.field", hasItem("nvlinkIslands[1]"));
        given().contentType(ContentType.JSON).body(DGX.replace("\"gpus\": 8", "\"gpus\": 65"))
                .when().put("/v1/nodes/dgx-huge").then().statusCode(400)
                .contentType(startsWith("application/problem+json"))
                .body("errors.field", hasItem("gpus"));
        assertThat(db.queryLong("select count(*) from node")).isEqualTo(nodes);
        assertThat(db.queryLong("select count(*) from outbox_event")).isEqualTo(events);
    }
}
