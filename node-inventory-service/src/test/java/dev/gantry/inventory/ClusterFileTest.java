package dev.gantry.inventory;

import static dev.gantry.inventory.Nodes.DGX;
import static dev.gantry.inventory.Nodes.events;
import static dev.gantry.inventory.Nodes.put;
import static dev.gantry.inventory.Nodes.version;
import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.contains;
import static org.hamcrest.Matchers.empty;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.hasItem;
import static org.hamcrest.Matchers.startsWith;

import dev.gantry.testing.TestDatabase;
import dev.gantry.testing.TestTokens;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import jakarta.inject.Inject;
import org.junit.jupiter.api.Test;

/** {@code POST /v1/cluster:apply}: the scenario format's nodes in JSON or YAML, applied declaratively. */
@QuarkusTest
class ClusterFileTest {

    static final String YAML = """
            format: gantry-scenario/v1
            name: two-racks
            nodes:
              - name: file-dgx-01
                gpuModel: A100-SXM4-80GB
                gpus: 8
                nvlinkIslands: [[0, 1, 2, 3, 4, 5, 6, 7]]
                numaNodes: [[0, 1, 2, 3], [4, 5, 6, 7]]
                cpuMillis: 224000
                memoryMiB: 1900000
                topology: {zone: z1, spine: sp1, leaf: lf1}
                ibFabric: ib-a
                labels: {nvidia.com/gpu.product: A100-SXM4-80GB}
              - name: file-dgx-02
                gpuModel: A100-SXM4-80GB
                gpus: 8
                topology: {zone: z1, spine: sp1, leaf: lf2}
                schedulable: false
              - name: file-l4-01
                gpuModel: L4
                gpus: 4
                gpuSharing: true
            queues:
              - {name: normal, weight: 1}
            """;

    @Inject
    TestDatabase db;

    static io.restassured.response.ValidatableResponse applyYaml(String body) {
        return given().auth().oauth2(TestTokens.admin()).contentType("application/yaml").body(body.getBytes(java.nio.charset.StandardCharsets.UTF_8)).when().post("/v1/cluster:apply").then();
    }

    @Test
    void aYamlFileAddsItsNodesThenAReappliedFileChangesOnlyWhatDiffersAndRemovesWhatItDropped() {
        put("agent-survivor", DGX).statusCode(200);
        applyYaml(YAML).statusCode(200)
                .body("added", contains("file-dgx-01", "file-dgx-02", "file-l4-01"))
                .body("removed", empty());
        given().auth().oauth2(TestTokens.admin()).when().get("/v1/nodes/file-dgx-02").then().statusCode(200)
                .body("schedulable", equalTo(false)).body("health", equalTo("READY"));
        given().auth().oauth2(TestTokens.admin()).when().get("/v1/nodes/file-l4-01").then().body("gpuSharing", equalTo(true));
        assertThat(db.queryString("select source from node where name = 'file-dgx-01'")).isEqualTo("FILE");
        long events = events(db, "nodes.upserted", "file-dgx-01");
        long version = version(db);

        applyYaml(YAML).statusCode(200).body("unchanged", equalTo(3)).body("version", equalTo((int) version));
        assertThat(version(db)).as("reapplying the same file is a no-op").isEqualTo(version);

        String next = YAML.replace("leaf: lf2}", "leaf: lf3}").replaceAll("(?s)  - name: file-l4-01.*?gpuSharing: true\n", "");
        applyYaml(next).statusCode(200)
                .body("changed", contains("file-dgx-02"))
                .body("removed", contains("file-l4-01"))
                .body("unchanged", equalTo(1));
        given().auth().oauth2(TestTokens.admin()).when().get("/v1/nodes/file-l4-01").then().statusCode(404);
        given().auth().oauth2(TestTokens.admin()).when().get("/v1/nodes/agent-survivor").then().statusCode(200);
        assertThat(events(db, "nodes.removed", "file-l4-01")).isEqualTo(1);
        assertThat(events(db, "nodes.upserted", "file-dgx-01")).isEqualTo(events);
        assertThat(version(db)).isEqualTo(version + 2);
    }

    /**
     * A large file applied twice: the second apply finds every node unchanged, which used to make one
     * Uni step per node chained on the next, all completing at once; at a few thousand nodes that
     * recursion overflowed the event loop's stack and the request never got an answer.
     */
    @Test
    void aLargeFileAppliedTwiceIsAnsweredBothTimes() {
        int count = 4000;
        StringBuilder file = new StringBuilder("{\"nodes\": [");
        for (int i = 0; i < count; i++) {
            file.append(i == 0 ? "" : ",").append("{\"name\": \"file-big-").append(i).append("\", \"gpuModel\": \"L4\", \"gpus\": 4}");
        }
        String body = file.append("]}").toString();
        given().auth().oauth2(TestTokens.admin()).contentType(ContentType.JSON).body(body)
                .when().post("/v1/cluster:apply").then().statusCode(200).body("added.size()", equalTo(count));
        given().auth().oauth2(TestTokens.admin()).contentType(ContentType.JSON).body(body)
                .when().post("/v1/cluster:apply").then().statusCode(200).body("unchanged", equalTo(count));
        // and a file without them removes them all, in one answer too
        given().auth().oauth2(TestTokens.admin()).contentType(ContentType.JSON).body("{\"nodes\": []}")
                .when().post("/v1/cluster:apply").then().statusCode(200).body("removed.size()", equalTo(count));
    }

    @Test
    void jsonWorksToo() {
        given().auth().oauth2(TestTokens.admin()).contentType(ContentType.JSON)
                .body("{\"nodes\": [{\"name\": \"file-json-01\", \"gpuModel\": \"H100\", \"gpus\": 8, \"nvlinkIslands\": [[0,1,2,3,4,5,6,7]]}]}")
                .when().post("/v1/cluster:apply").then().statusCode(200).body("added", hasItem("file-json-01"));
    }

    @Test
    void aFileWithAnyErrorIsRefusedWholeNamingTheField() {
        long nodes = db.queryLong("select count(*) from node");
        long outbox = db.queryLong("select count(*) from outbox_event");
        long version = version(db);

        applyYaml(YAML.replace("name: file-dgx-02", "name: file-dgx-01")).statusCode(422)
                .contentType(startsWith("application/problem+json"))
                .body("errors.field", hasItem("nodes[1].name"));
        applyYaml(YAML.replace("gpus: 4", "gpus: 65")).statusCode(400).body("errors.field", hasItem("nodes[2].gpus"));
        applyYaml(YAML.replace("gpuSharing: true", "gpuSharing: true\n    gpuSlices: 3")).statusCode(400)
                .body("errors.field", hasItem("nodes[2].gpuSlices"));
        applyYaml(YAML.replace("[[0, 1, 2, 3, 4, 5, 6, 7]]", "[[0, 1, 2, 3, 4, 5, 6, 7, 8]]")).statusCode(422)
                .body("errors.field", hasItem("nodes[0].nvlinkIslands[0]"));
        applyYaml(YAML.replace("gpus: 4", "gpus: 4\n    topoMatrix: nonsense")).statusCode(400)
                .body("errors.field", hasItem("nodes[2].topoMatrix"));
        applyYaml(YAML.replace("gantry-scenario/v1", "gantry-scenario/v9")).statusCode(422).body("errors.field", hasItem("format"));
        applyYaml("name: no-nodes\n").statusCode(400).body("errors.field", hasItem("nodes"));
        applyYaml("nodes: [ {").statusCode(400).contentType(startsWith("application/problem+json"));
        given().auth().oauth2(TestTokens.admin()).contentType(ContentType.JSON).body("{\"nodes\": [{\"name\": \"x\", \"gpus\": \"many\"}]}")
                .when().post("/v1/cluster:apply").then().statusCode(400).body("errors.field", hasItem("nodes[0].gpus"));

        assertThat(db.queryLong("select count(*) from node")).isEqualTo(nodes);
        assertThat(db.queryLong("select count(*) from outbox_event")).isEqualTo(outbox);
        assertThat(version(db)).isEqualTo(version);
    }
}
