package dev.gantry.inventory;

import static dev.gantry.inventory.Nodes.DGX;
import static dev.gantry.inventory.Nodes.events;
import static dev.gantry.inventory.Nodes.put;
import static dev.gantry.inventory.Nodes.version;
import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.contains;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.hasItem;
import static org.hamcrest.Matchers.hasItems;
import static org.hamcrest.Matchers.notNullValue;
import static org.hamcrest.Matchers.startsWith;

import dev.gantry.contracts.events.EventCodec;
import dev.gantry.contracts.nodes.NodeChanged;
import dev.gantry.contracts.nodes.NodeInfo;
import dev.gantry.contracts.nodes.NodeRemoved;
import dev.gantry.inventory.domain.NvidiaSmiTopologyTest;
import dev.gantry.testing.TestDatabase;
import dev.gantry.testing.TestNats;
import dev.gantry.testing.TestTokens;
import io.nats.client.Message;
import io.nats.client.Subscription;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.vertx.VertxContextSupport;
import jakarta.inject.Inject;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.Test;

/** The agent API against the real PostgreSQL and NATS: register, update, heartbeat, cordon, remove, and what is refused. */
@QuarkusTest
class AgentApiTest {

    @Inject
    TestDatabase db;

    @Inject
    HeartbeatSweep sweep;

    @ConfigProperty(name = "gantry.nats.url")
    String natsUrl;

    @Test
    void aRegisteredNodeIsStoredVersionedAndPublishedOnTheBroker() throws Exception {
        try (TestNats nats = TestNats.connect(natsUrl)) {
            Subscription sub = nats.connection().subscribe("nodes.>");
            nats.connection().flush(Duration.ofSeconds(2));
            long before = version(db);

            put("agent-dgx-01", DGX).statusCode(200)
                    .body("schedulable", equalTo(true))
                    .body("health", equalTo("READY"))
                    .body("gpuMemoryMiB", equalTo(81920))
                    .body("lastHeartbeat", notNullValue());
            given().auth().oauth2(TestTokens.admin()).when().get("/v1/nodes/agent-dgx-01").then().statusCode(200)
                    .body("topology.leaf", equalTo("lf1"))
                    .body("nvlinkIslands[0].size()", equalTo(8));
            assertThat(db.queryString("select source from node where name = 'agent-dgx-01'")).isEqualTo("AGENT");
            assertThat(version(db)).isEqualTo(before + 1);

            NodeChanged published = next(sub, "nodes.upserted", "agent-dgx-01", NodeChanged.class);
            assertThat(published.snapshotVersion()).isEqualTo(before + 1);
            assertThat(published.node().gpus()).isEqualTo(8);
            assertThat(published.node().ibHcas()).isEqualTo(8);

            given().auth().oauth2(TestTokens.admin()).when().delete("/v1/nodes/agent-dgx-01").then().statusCode(204);
            given().auth().oauth2(TestTokens.admin()).when().get("/v1/nodes/agent-dgx-01").then().statusCode(404)
                    .contentType(startsWith("application/problem+json"));
            given().auth().oauth2(TestTokens.admin()).when().delete("/v1/nodes/agent-dgx-01").then().statusCode(404);
            NodeRemoved removed = next(sub, "nodes.removed", "agent-dgx-01", NodeRemoved.class);
            assertThat(removed.snapshotVersion()).isEqualTo(before + 2);
        }
    }

    @Test
    void aNodeAgentsNodeShowsItsSourceAndWhetherItsGpusAreSimulatedAndTheEventCarriesBoth() throws Exception {
        try (TestNats nats = TestNats.connect(natsUrl)) {
            Subscription sub = nats.connection().subscribe("nodes.>");
            nats.connection().flush(Duration.ofSeconds(2));
            put("agent-sim-01", DGX.replaceFirst("\\{", "{\"simulated\": true, ")).statusCode(200)
                    .body("source", equalTo("AGENT")).body("simulated", equalTo(true));
            given().auth().oauth2(TestTokens.user("alice", "vision")).when().get("/v1/nodes?limit=500").then().statusCode(200)
                    .body("items.find { it.name == 'agent-sim-01' }.simulated", equalTo(true))
                    .body("items.find { it.name == 'agent-sim-01' }.source", equalTo("AGENT"));
            NodeChanged published = next(sub, "nodes.upserted", "agent-sim-01", NodeChanged.class);
            assertThat(published.node().source()).isEqualTo("AGENT");
            assertThat(published.node().simulated()).isTrue();
            assertThat(published.node().agentManaged()).isTrue();
            // the same node with real GPUs is a change consumers hear of
            put("agent-sim-01", DGX).statusCode(200).body("simulated", equalTo(false));
            assertThat(next(sub, "nodes.upserted", "agent-sim-01", NodeChanged.class).node().simulated()).isFalse();
        }
        // the description cannot claim a source: that is the inventory's to say
        put("agent-sim-02", DGX.replaceFirst("\\{", "{\"source\": \"FILE\", ")).statusCode(400)
                .contentType(startsWith("application/problem+json"));
        given().auth().oauth2(TestTokens.admin()).when().get("/v1/nodes/agent-sim-02").then().statusCode(404);
    }

    @Test
    void aNodesMigDevicesAreStoredShownAndPublishedOneByOne() throws Exception {
        String devices = "[{\"id\": \"MIG-9c1f\", \"gpu\": 7, \"profile\": \"3g.40gb\"},"
                + " {\"id\": \"MIG-77aa\", \"gpu\": 7, \"profile\": \"3g.40gb\"}]";
        try (TestNats nats = TestNats.connect(natsUrl)) {
            Subscription sub = nats.connection().subscribe("nodes.>");
            nats.connection().flush(Duration.ofSeconds(2));
            put("agent-mig-01", DGX.replace("\"taints\": []", "\"mig\": {\"strategy\": \"mixed\", \"devices\": " + devices + "}"))
                    .statusCode(200)
                    .body("mig.profiles.'3g.40gb'", equalTo(2))
                    .body("mig.devices.id", contains("MIG-9c1f", "MIG-77aa"));
            given().auth().oauth2(TestTokens.user("alice", "vision")).when().get("/v1/nodes/agent-mig-01").then().statusCode(200)
                    .body("mig.devices[0].gpu", equalTo(7)).body("mig.devices[0].profile", equalTo("3g.40gb"));
            NodeChanged published = next(sub, "nodes.upserted", "agent-mig-01", NodeChanged.class);
            assertThat(published.node().mig().devices()).extracting(NodeInfo.MigDevice::id).containsExactly("MIG-9c1f", "MIG-77aa");
        }
        // a scenario file's node names them migDevices: the same
        put("agent-mig-02", DGX.replace("\"taints\": []", "\"migDevices\": " + devices)).statusCode(200)
                .body("mig.strategy", equalTo("mixed")).body("mig.devices.size()", equalTo(2));
        put("agent-mig-bad", DGX.replace("\"taints\": []", "\"migDevices\": [{\"id\": \"MIG-1\", \"gpu\": 8, \"profile\": \"3g.40gb\"},"
                + " {\"id\": \"MIG-1\", \"gpu\": 0, \"profile\": \"3 slices\"}]")).statusCode(422)
                .body("errors.field", hasItems("mig.devices[0].gpu", "mig.devices[1].id", "mig.devices[1].profile"));
        given().auth().oauth2(TestTokens.admin()).when().get("/v1/nodes/agent-mig-bad").then().statusCode(404);
    }

    @Test
    void anIdenticalUpdateOrAHeartbeatSendsNoEventAndKeepsTheVersion() {
        put("agent-noop", DGX).statusCode(200);
        long events = events(db, "nodes.upserted", "agent-noop");
        long version = version(db);

        put("agent-noop", DGX).statusCode(200);
        given().auth().oauth2(TestTokens.agent("agent-noop")).when().post("/v1/nodes/agent-noop/heartbeat").then().statusCode(200).body("health", equalTo("READY"));
        assertThat(events(db, "nodes.upserted", "agent-noop")).isEqualTo(events);
        assertThat(version(db)).isEqualTo(version);

        put("agent-noop", DGX.replace("\"lf1\"", "\"lf2\"")).statusCode(200).body("topology.leaf", equalTo("lf2"));
        assertThat(events(db, "nodes.upserted", "agent-noop")).isEqualTo(events + 1);
        assertThat(version(db)).isEqualTo(version + 1);
        given().auth().oauth2(TestTokens.agent("nobody")).when().post("/v1/nodes/nobody/heartbeat").then().statusCode(404);
    }

    @Test
    void cordonAndUncordonUseAColonPathAndSurviveAgentUpdates() {
        put("agent-cordon", DGX).statusCode(200);
        long events = events(db, "nodes.upserted", "agent-cordon");

        given().auth().oauth2(TestTokens.admin()).when().post("/v1/nodes/agent-cordon:cordon").then().statusCode(200)
                .body("schedulable", equalTo(false)).body("cordoned", equalTo(true));
        given().auth().oauth2(TestTokens.admin()).when().post("/v1/nodes/agent-cordon:cordon").then().statusCode(200);
        assertThat(events(db, "nodes.upserted", "agent-cordon")).as("a second cordon is a no-op").isEqualTo(events + 1);

        put("agent-cordon", DGX).statusCode(200).body("schedulable", equalTo(false));
        given().auth().oauth2(TestTokens.admin()).when().get("/v1/nodes?schedulable=false&limit=500").then().body("items.name", hasItem("agent-cordon"));
        given().auth().oauth2(TestTokens.admin()).when().get("/v1/snapshot").then().statusCode(200)
                .body("nodes.name", org.hamcrest.Matchers.not(hasItem("agent-cordon")));

        given().auth().oauth2(TestTokens.admin()).when().post("/v1/nodes/agent-cordon:uncordon").then().statusCode(200)
                .body("schedulable", equalTo(true)).body("cordoned", equalTo(false));
        given().auth().oauth2(TestTokens.admin()).when().get("/v1/snapshot").then().body("nodes.name", hasItem("agent-cordon"));
        given().auth().oauth2(TestTokens.admin()).when().post("/v1/nodes/nobody:cordon").then().statusCode(404).contentType(startsWith("application/problem+json"));
    }

    @Test
    void aNodeWithoutHeartbeatTurnsNotReadyAndAHeartbeatBringsItBack() throws Throwable {
        put("agent-stale", DGX).statusCode(200);
        put("agent-fresh", DGX).statusCode(200);
        db.execute("update node set last_heartbeat = ? where name = 'agent-stale'",
                java.sql.Timestamp.from(Instant.now().minus(Duration.ofHours(1))));
        long events = events(db, "nodes.upserted", "agent-stale");

        List<String> stale = VertxContextSupport.subscribeAndAwait(() -> sweep.sweep(Instant.now()));
        assertThat(stale).contains("agent-stale").doesNotContain("agent-fresh");
        given().auth().oauth2(TestTokens.admin()).when().get("/v1/nodes/agent-stale").then().body("health", equalTo("NOT_READY"));
        given().auth().oauth2(TestTokens.admin()).when().get("/v1/nodes/agent-fresh").then().body("health", equalTo("READY"));
        assertThat(events(db, "nodes.upserted", "agent-stale")).isEqualTo(events + 1);
        String event = db.queryString("select envelope from outbox_event where subject_id = 'agent-stale' order by id desc limit 1");
        assertThat(event).contains("\"health\":\"NOT_READY\"");
        given().auth().oauth2(TestTokens.admin()).when().get("/v1/snapshot").then().body("nodes.name", org.hamcrest.Matchers.not(hasItem("agent-stale")));

        given().auth().oauth2(TestTokens.agent("agent-stale")).when().post("/v1/nodes/agent-stale/heartbeat").then().statusCode(200).body("health", equalTo("READY"));
        assertThat(events(db, "nodes.upserted", "agent-stale")).isEqualTo(events + 2);
    }

    @Test
    void topologyMayComeAsTheTextOfNvidiaSmiTopo() {
        String body = """
                {"gpuModel": "A100-SXM4-80GB", "ibFabric": "ib-a", "cpuMillis": 224000, "memoryMiB": 1900000, "topoMatrix": %s}
                """.formatted(quoted(NvidiaSmiTopologyTest.matrix("dgx-a100.txt")));
        put("agent-topo", body).statusCode(200)
                .body("gpus", equalTo(8))
                .body("nvlinkIslands", contains(List.of(0, 1, 2, 3, 4, 5, 6, 7)))
                .body("numaNodes.size()", equalTo(4))
                .body("ibHcas", equalTo(10));

        String pairs = """
                {"gpuModel": "RTX-A6000", "gpus": 8, "topoMatrix": %s}
                """.formatted(quoted(NvidiaSmiTopologyTest.matrix("pcie-nvlink-pairs.txt")));
        put("agent-pairs", pairs).statusCode(200).body("nvlinkIslands.size()", equalTo(4));
    }

    @Test
    void badInputIsAProblemNamingTheFieldAndNothingIsStoredOrSent() {
        long nodes = db.queryLong("select count(*) from node");
        long outbox = db.queryLong("select count(*) from outbox_event");
        long version = version(db);

        put("agent-bad", DGX.replace("[[0,1,2,3,4,5,6,7]]", "[[0,1,2,3],[3,4,5,6,7,8]]")).statusCode(422)
                .contentType(startsWith("application/problem+json"))
                .body("errors.field", hasItem("nvlinkIslands[1]"));
        put("agent-bad", DGX.replace("\"gpus\": 8", "\"gpus\": 65")).statusCode(400)
                .contentType(startsWith("application/problem+json"))
                .body("errors.field", hasItem("gpus"));
        put("agent-bad", DGX.replace("\"gpus\": 8", "\"gpus\": 8, \"gpuCount\": 8")).statusCode(400)
                .contentType(startsWith("application/problem+json"))
                .body("errors.field", hasItem("gpuCount"));
        put("agent-bad", DGX.replace("\"zone\": \"z1\"", "\"zone\": \"z1\", \"rack\": \"r1\"")).statusCode(400)
                .body("errors.field", hasItem("topology.rack"));
        put("agent-bad", DGX.replace("\"ibHcas\": 8", "\"ibHcas\": -1")).statusCode(400).body("errors.field", hasItem("ibHcas"));
        put("agent-bad", DGX.replace("\"numaNodes\": [[0,1,2,3],[4,5,6,7]]", "\"numaNodes\": [[0,1,2,3],[4,5,6,7,9]]"))
                .statusCode(422).body("errors.field", hasItem("numaNodes[1]"));
        put("agent-bad", DGX.replace("\"taints\": []", "\"taints\": [{\"key\": \"k\", \"effect\": \"Never\"}]"))
                .statusCode(422).body("errors.field", hasItem("taints[0].effect"));
        put("agent-bad", DGX.replace("\"taints\": []", "\"mig\": {\"strategy\": \"sometimes\"}")).statusCode(422)
                .body("errors.field", hasItem("mig.strategy"));
        put("agent-bad", DGX.replace("\"gpus\": 8", "\"gpus\": 8, \"name\": \"other\"")).statusCode(422)
                .body("errors.field", hasItem("name"));
        put("Not_A_DNS_Name", DGX).statusCode(422).body("errors.field", hasItem("name"));
        put("agent-bad", "{\"gpus\": 4, \"gpuModel\": \"x\", \"topoMatrix\": \"GPU0 X\\nnonsense\"}").statusCode(400)
                .contentType(startsWith("application/problem+json"))
                .body("errors.field", hasItem("topoMatrix"))
                .body("detail", containsString("topoMatrix"));
        put("agent-bad", "{\"gpus\": 2, \"gpuModel\": \"x\", \"topoMatrix\": %s}"
                .formatted(quoted(NvidiaSmiTopologyTest.matrix("workstation-4gpu.txt")))).statusCode(422)
                .body("errors.field", hasItem("gpus"));
        put("agent-bad", "{\"gpus\": ").statusCode(400).contentType(startsWith("application/problem+json"));

        assertThat(db.queryLong("select count(*) from node")).isEqualTo(nodes);
        assertThat(db.queryLong("select count(*) from outbox_event")).isEqualTo(outbox);
        assertThat(version(db)).isEqualTo(version);
    }

    @Test
    void listingFiltersByModelLeafAndSchedulableAndPagesWithACursor() {
        for (int i = 0; i < 5; i++) {
            put("page-h100-" + i, DGX.replace("A100-SXM4-80GB", "H100-PAGE").replace("\"lf1\"", i < 3 ? "\"leaf-p1\"" : "\"leaf-p2\""))
                    .statusCode(200);
        }
        given().auth().oauth2(TestTokens.admin()).when().post("/v1/nodes/page-h100-4:cordon").then().statusCode(200);

        List<String> seen = new ArrayList<>();
        String cursor = null;
        int pages = 0;
        do {
            var request = given().auth().oauth2(TestTokens.admin()).queryParam("model", "H100-PAGE").queryParam("limit", 2);
            if (cursor != null) {
                request.queryParam("cursor", cursor);
            }
            var page = request.when().get("/v1/nodes").then().statusCode(200).extract().jsonPath();
            seen.addAll(page.getList("items.name", String.class));
            cursor = page.getString("nextCursor");
            pages++;
        } while (cursor != null);
        assertThat(seen).containsExactly("page-h100-0", "page-h100-1", "page-h100-2", "page-h100-3", "page-h100-4");
        assertThat(pages).isEqualTo(3);

        given().auth().oauth2(TestTokens.admin()).queryParam("model", "H100-PAGE").queryParam("leaf", "leaf-p2").when().get("/v1/nodes").then()
                .body("items.name", contains("page-h100-3", "page-h100-4"));
        given().auth().oauth2(TestTokens.admin()).queryParam("model", "H100-PAGE").queryParam("schedulable", "true").queryParam("leaf", "leaf-p2")
                .when().get("/v1/nodes").then().body("items.name", contains("page-h100-3"));
        given().auth().oauth2(TestTokens.admin()).queryParam("limit", 0).when().get("/v1/nodes").then().statusCode(400).body("errors.field", hasItem("limit"));
        given().auth().oauth2(TestTokens.admin()).queryParam("cursor", "garbage!").when().get("/v1/nodes").then().statusCode(400).body("errors.field", hasItem("cursor"));
        given().auth().oauth2(TestTokens.admin()).queryParam("schedulable", "maybe").when().get("/v1/nodes").then().statusCode(400);
    }

    private static String quoted(String text) {
        return dev.gantry.contracts.events.EventCodec.toJson(text);
    }

    /** The next message on the broker for this node and subject (others' are skipped). */
    private static <P> P next(Subscription sub, String subject, String name, Class<P> type) throws InterruptedException {
        long deadline = System.currentTimeMillis() + 15_000;
        while (System.currentTimeMillis() < deadline) {
            Message message = sub.nextMessage(Duration.ofMillis(500));
            if (message == null || !message.getSubject().equals(subject)) {
                continue;
            }
            var envelope = EventCodec.decode(new String(message.getData(), StandardCharsets.UTF_8), type);
            if (envelope.subjectId().equals(name)) {
                return envelope.payload();
            }
        }
        throw new AssertionError("no " + subject + " for " + name + " on the broker within 15 s");
    }

}
