package dev.gantry.inventory.placement;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.hasItems;
import static org.hamcrest.Matchers.nullValue;

import dev.gantry.testing.TestTokens;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** A node placement quarantined shows why and since when in the inventory's node view (issue 18 item 4). */
@QuarkusTest
@QuarkusTestResource(PlacementStub.class)
class QuarantinedNodeViewTest {

    private static final String NODE = """
            {"gpuModel": "A100-SXM4-80GB", "gpus": 8, "nvlinkIslands": [[0,1,2,3,4,5,6,7]], "numaNodes": [[0,1,2,3],[4,5,6,7]],
             "cpuMillis": 224000, "memoryMiB": 1900000, "gpuMemoryMiB": 81920,
             "topology": {"zone": "z1", "spine": "sp1", "leaf": "lf-quarantine"}, "ibFabric": "ib-a", "ibHcas": 8, "labels": {}, "taints": []}
            """;

    @BeforeEach
    void nodes() {
        for (String name : new String[] {"qv-shrunk", "qv-fine"}) {
            given().auth().oauth2(TestTokens.admin()).contentType(ContentType.JSON).body(NODE).when().put("/v1/nodes/" + name)
                    .then().statusCode(200);
        }
        PlacementStub.quarantined = """
                [{"node": "qv-shrunk", "reason": "gpus: 4 is fewer than the 7 GPUs allocated on it", "since": "2026-12-05T12:00:00Z"}]
                """;
        PlacementStub.status = 200;
    }

    @AfterEach
    void reset() {
        PlacementStub.quarantined = "[]";
        PlacementStub.status = 200;
    }

    @Test
    void aQuarantinedNodeShowsPlacementsReasonAndSince() {
        String user = TestTokens.user("alice", "vision");
        given().auth().oauth2(user).when().get("/v1/nodes/qv-shrunk").then().statusCode(200)
                .body("name", equalTo("qv-shrunk")).body("gpus", equalTo(8))
                .body("quarantine.reason", equalTo("gpus: 4 is fewer than the 7 GPUs allocated on it"))
                .body("quarantine.since", equalTo("2026-12-05T12:00:00Z"));
        given().auth().oauth2(user).when().get("/v1/nodes/qv-fine").then().statusCode(200).body("quarantine", nullValue());
        given().auth().oauth2(user).queryParam("leaf", "lf-quarantine").when().get("/v1/nodes").then().statusCode(200)
                .body("quarantineKnown", equalTo(true))
                .body("items.find { it.name == 'qv-shrunk' }.quarantine.reason", equalTo("gpus: 4 is fewer than the 7 GPUs allocated on it"))
                .body("items.find { it.name == 'qv-fine' }.quarantine", nullValue());
        // placement is asked with the caller's own token: it decides what the caller may read
        assertThat(PlacementStub.AUTHORIZATIONS.getLast()).isEqualTo("Bearer " + user);
    }

    @Test
    void whenPlacementDoesNotAnswerTheNodesAreStillServedWithoutQuarantine() {
        PlacementStub.status = 503;
        given().auth().oauth2(TestTokens.admin()).queryParam("leaf", "lf-quarantine").when().get("/v1/nodes").then().statusCode(200)
                .body("quarantineKnown", equalTo(false)).body("items.name", hasItems("qv-shrunk", "qv-fine"))
                .body("items.find { it.name == 'qv-shrunk' }.quarantine", nullValue());
    }
}
