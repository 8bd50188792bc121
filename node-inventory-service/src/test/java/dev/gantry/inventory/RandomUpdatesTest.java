package dev.gantry.inventory;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;

import dev.gantry.contracts.events.EventCodec;
import dev.gantry.testing.TestDatabase;
import dev.gantry.testing.TestTokens;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.vertx.VertxContextSupport;
import io.restassured.http.ContentType;
import io.restassured.path.json.JsonPath;
import jakarta.inject.Inject;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Random;
import java.util.TreeMap;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * The property the issue asks for, on the real service, database and outbox: after any sequence of
 * updates from every source (agent PUT, heartbeat, cordon, uncordon, delete, heartbeat timeout,
 * cluster-file apply), the snapshot equals the state a plain in-memory model of those updates
 * describes, the version goes up by exactly one per visible change (never for a no-op) and one
 * event is written per change. Random but reproducible: a fixed seed.
 */
@QuarkusTest
class RandomUpdatesTest {

    static final long SEED = 20261202L;
    static final int STEPS = 120;
    static final List<String> AGENT_NAMES = List.of("prop-a0", "prop-a1", "prop-a2", "prop-a3");
    static final List<String> FILE_NAMES = List.of("prop-f0", "prop-f1", "prop-f2");

    /** What the model keeps of a node: enough to tell any visible change. */
    record Expected(String model, int gpus, String leaf, boolean sourceSchedulable, boolean cordoned, String health, boolean file) {
        boolean schedulable() {
            return sourceSchedulable && !cordoned;
        }

        boolean inSnapshot() {
            return schedulable() && health.equals("READY");
        }
    }

    @Inject
    TestDatabase db;

    @Inject
    NodeRegistry registry;

    private final Map<String, Expected> model = new TreeMap<>();
    private final Random random = new Random(SEED);

    @Test
    void theSnapshotAlwaysEqualsWhatTheUpdatesDescribe() throws Throwable {
        for (String name : AGENT_NAMES) {
            given().auth().oauth2(TestTokens.admin()).when().delete("/v1/nodes/" + name);
        }
        applyFile(List.of()); // the model starts with no file nodes
        long version = Nodes.version(db);
        long events = db.queryLong("select count(*) from outbox_event");

        for (int step = 0; step < STEPS; step++) {
            int changes = step(step);
            long nowVersion = Nodes.version(db);
            long nowEvents = db.queryLong("select count(*) from outbox_event");
            assertThat(nowVersion - version).as("step %d: version bump = visible changes", step).isEqualTo(changes);
            assertThat(nowEvents - events).as("step %d: one event per change", step).isEqualTo(changes);
            version = nowVersion;
            events = nowEvents;
            if (step % 8 == 0 || step == STEPS - 1) {
                assertSnapshotMatchesModel(step);
            }
        }
    }

    /** One random operation; returns how many visible changes the model says it makes. */
    private int step(int step) throws Throwable {
        String name = AGENT_NAMES.get(random.nextInt(AGENT_NAMES.size()));
        Expected current = model.get(name);
        switch (random.nextInt(8)) {
            case 0, 1 -> {
                Expected next = randomNode(false, current);
                given().auth().oauth2(TestTokens.admin()).contentType(ContentType.JSON).body(body(null, next)).when().put("/v1/nodes/" + name).then().statusCode(200);
                model.put(name, next);
                return Objects.equals(current, next) ? 0 : 1;
            }
            case 2 -> {
                if (current == null) {
                    given().auth().oauth2(TestTokens.admin()).when().post("/v1/nodes/" + name + "/heartbeat").then().statusCode(404);
                    return 0;
                }
                given().auth().oauth2(TestTokens.admin()).when().post("/v1/nodes/" + name + "/heartbeat").then().statusCode(200);
                model.put(name, with(current, current.cordoned(), "READY"));
                return current.health().equals("READY") ? 0 : 1;
            }
            case 3, 4 -> {
                boolean cordon = random.nextBoolean();
                String target = random.nextBoolean() || model.keySet().stream().noneMatch(FILE_NAMES::contains) ? name
                        : FILE_NAMES.get(random.nextInt(FILE_NAMES.size()));
                Expected node = model.get(target);
                given().auth().oauth2(TestTokens.admin()).when().post("/v1/nodes/" + target + (cordon ? ":cordon" : ":uncordon")).then()
                        .statusCode(node == null ? 404 : 200);
                if (node == null) {
                    return 0;
                }
                model.put(target, with(node, cordon, node.health()));
                return node.cordoned() == cordon ? 0 : 1;
            }
            case 5 -> {
                given().auth().oauth2(TestTokens.admin()).when().delete("/v1/nodes/" + name).then().statusCode(current == null ? 404 : 204);
                model.remove(name);
                return current == null ? 0 : 1;
            }
            case 6 -> {
                if (current == null) {
                    return 0;
                }
                // aged far beyond any other test's nodes, swept with a timeout only it exceeds
                db.execute("update node set last_heartbeat = ? where name = ?",
                        java.sql.Timestamp.from(Instant.now().minus(Duration.ofDays(30))), name);
                List<String> stale = VertxContextSupport.subscribeAndAwait(() -> registry.markStale(Instant.now(), Duration.ofDays(7)));
                boolean fileNode = current.file();
                assertThat(stale).as("only the aged agent node is stale").isEqualTo(fileNode || !current.health().equals("READY")
                        ? List.of() : List.of(name));
                if (fileNode) {
                    return 0; // file nodes are not swept
                }
                model.put(name, with(current, current.cordoned(), current.health().equals("READY") ? "NOT_READY" : current.health()));
                return current.health().equals("READY") ? 1 : 0;
            }
            default -> {
                List<String> listed = FILE_NAMES.stream().filter(n -> random.nextInt(3) > 0).toList();
                Map<String, Expected> wanted = new LinkedHashMap<>();
                for (String file : listed) {
                    wanted.put(file, randomNode(true, model.get(file)));
                }
                int changes = 0;
                for (String file : FILE_NAMES) {
                    Expected before = model.get(file);
                    Expected after = wanted.get(file);
                    if (!Objects.equals(before, after)) {
                        changes++;
                    }
                    if (after == null) {
                        model.remove(file);
                    } else {
                        model.put(file, after);
                    }
                }
                applyFile(new ArrayList<>(wanted.entrySet()));
                return changes;
            }
        }
    }

    /** A random description; a known node keeps its cordon (the inventory's own state) and is Ready again. */
    private Expected randomNode(boolean file, Expected current) {
        String model = random.nextBoolean() ? "A100-PROP" : "H100-PROP";
        int gpus = List.of(0, 4, 8).get(random.nextInt(3));
        String leaf = random.nextBoolean() ? "leaf-a" : "leaf-b";
        boolean schedulable = random.nextInt(4) > 0;
        return new Expected(model, gpus, leaf, schedulable, current != null && current.cordoned(), "READY", file);
    }

    private static Expected with(Expected node, boolean cordoned, String health) {
        return new Expected(node.model(), node.gpus(), node.leaf(), node.sourceSchedulable(), cordoned, health, node.file());
    }

    private static String body(String name, Expected node) {
        Map<String, Object> body = new LinkedHashMap<>();
        if (name != null) {
            body.put("name", name);
        }
        body.put("gpuModel", node.model());
        body.put("gpus", node.gpus());
        body.put("topology", Map.of("leaf", node.leaf()));
        body.put("schedulable", node.sourceSchedulable());
        return EventCodec.toJson(body);
    }

    private void applyFile(List<Map.Entry<String, Expected>> nodes) {
        String json = nodes.stream().map(e -> body(e.getKey(), e.getValue())).collect(Collectors.joining(",", "{\"nodes\":[", "]}"));
        given().auth().oauth2(TestTokens.admin()).contentType(ContentType.JSON).body(json).when().post("/v1/cluster:apply").then().statusCode(200);
    }

    private void assertSnapshotMatchesModel(int step) {
        JsonPath snapshot = given().auth().oauth2(TestTokens.admin()).when().get("/v1/snapshot").then().statusCode(200).extract().jsonPath();
        Map<String, String> actual = new TreeMap<>();
        List<Map<String, Object>> nodes = snapshot.getList("nodes");
        for (Map<String, Object> node : nodes) {
            String name = (String) node.get("name");
            if (name.startsWith("prop-")) {
                actual.put(name, node.get("gpuModel") + "/" + node.get("gpus") + "/" + ((Map<?, ?>) node.get("topology")).get("leaf"));
            }
        }
        Map<String, String> expected = new TreeMap<>();
        model.forEach((name, node) -> {
            if (node.inSnapshot()) {
                expected.put(name, node.model() + "/" + node.gpus() + "/" + node.leaf());
            }
        });
        assertThat(actual).as("snapshot at step %d", step).isEqualTo(expected);

        for (Map.Entry<String, Expected> entry : model.entrySet()) {
            JsonPath node = given().auth().oauth2(TestTokens.admin()).when().get("/v1/nodes/" + entry.getKey()).then().statusCode(200).extract().jsonPath();
            assertThat(node.getBoolean("schedulable")).as("%s schedulable at step %d", entry.getKey(), step).isEqualTo(entry.getValue().schedulable());
            assertThat(node.getString("health")).as("%s health at step %d", entry.getKey(), step).isEqualTo(entry.getValue().health());
        }
    }
}
