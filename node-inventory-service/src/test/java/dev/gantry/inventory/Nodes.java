package dev.gantry.inventory;

import static io.restassured.RestAssured.given;

import dev.gantry.testing.TestDatabase;
import dev.gantry.testing.TestTokens;
import io.restassured.http.ContentType;
import io.restassured.response.ValidatableResponse;

/** Request bodies and calls the inventory tests share. */
final class Nodes {

    static final String DGX = """
            {"gpuModel": "A100-SXM4-80GB", "gpus": 8,
             "nvlinkIslands": [[0,1,2,3,4,5,6,7]], "numaNodes": [[0,1,2,3],[4,5,6,7]],
             "cpuMillis": 224000, "memoryMiB": 1900000, "gpuMemoryMiB": 81920,
             "topology": {"zone": "z1", "spine": "sp1", "leaf": "lf1"}, "ibFabric": "ib-a", "ibHcas": 8,
             "labels": {"nvidia.com/gpu.product": "A100-SXM4-80GB"}, "taints": []}
            """;

    private Nodes() {
    }

    /** The agent API as the node's own agent would call it (an agent token for {@code name}). */
    static ValidatableResponse put(String name, String body) {
        return given().auth().oauth2(TestTokens.agent(name)).contentType(ContentType.JSON).body(body).when().put("/v1/nodes/" + name).then();
    }

    static long events(TestDatabase db, String subject, String name) {
        return db.queryLong("select count(*) from outbox_event where subject = ? and subject_id = ?", subject, name);
    }

    static long version(TestDatabase db) {
        return db.queryLong("select version from inventory_version");
    }

    static String json(String text) {
        return text;
    }
}
