package dev.gantry.inventory;

import static dev.gantry.inventory.Nodes.DGX;
import static dev.gantry.inventory.Nodes.put;
import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.hasItem;

import dev.gantry.contracts.events.EventCodec;
import dev.gantry.contracts.nodes.NodeChanged;
import dev.gantry.inventory.kubernetes.NodeInformer;
import dev.gantry.testing.TestDatabase;
import dev.gantry.testing.TestTokens;
import io.restassured.http.ContentType;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import org.junit.jupiter.api.Test;

/** {@code GET /v1/snapshot}: schedulable Ready nodes, a version that only grows, ETag and If-None-Match. */
@QuarkusTest
class SnapshotTest {

    @Inject
    TestDatabase db;

    @Inject
    NodeInformer informer;

    @Test
    void withKubernetesDisabledNoInformerRuns() {
        assertThat(informer.watching()).isFalse();
    }

    @Test
    void concurrentWritesGetDistinctConsecutiveVersions() throws Exception {
        long before = Nodes.version(db);
        int writers = 8;
        ExecutorService pool = Executors.newFixedThreadPool(writers);
        try {
            List<Future<Integer>> results = new ArrayList<>();
            for (int i = 0; i < writers; i++) {
                String name = "race-" + i;
                results.add(pool.submit(() -> given().auth().oauth2(TestTokens.admin()).contentType(ContentType.JSON).body(DGX)
                        .when().put("/v1/nodes/" + name).then().extract().statusCode()));
            }
            for (Future<Integer> result : results) {
                assertThat(result.get(60, TimeUnit.SECONDS)).isEqualTo(200);
            }
        } finally {
            pool.shutdownNow();
        }
        assertThat(Nodes.version(db)).isEqualTo(before + writers);
        List<Long> versions = new ArrayList<>();
        for (int i = 0; i < writers; i++) {
            String envelope = db.queryString("select envelope from outbox_event where subject_id = ? order by id desc limit 1", "race-" + i);
            versions.add(EventCodec.decode(envelope, NodeChanged.class).payload().snapshotVersion());
        }
        assertThat(versions).doesNotHaveDuplicates().allMatch(v -> v > before && v <= before + writers);
    }

    @Test
    void theVersionIsTheEtagAndAnUnchangedSnapshotIsNotModified() {
        put("snap-01", DGX).statusCode(200);
        var first = given().auth().oauth2(TestTokens.admin()).when().get("/v1/snapshot").then().statusCode(200)
                .body("nodes.name", hasItem("snap-01")).extract();
        long version = first.jsonPath().getLong("version");
        assertThat(first.header("ETag")).isEqualTo("\"" + version + "\"");
        assertThat(version).isEqualTo(Nodes.version(db));

        given().auth().oauth2(TestTokens.admin()).header("If-None-Match", "\"" + version + "\"").when().get("/v1/snapshot").then().statusCode(304);
        given().auth().oauth2(TestTokens.admin()).header("If-None-Match", "W/\"" + version + "\", \"1\"").when().get("/v1/snapshot").then().statusCode(304);
        put("snap-01", DGX).statusCode(200);
        given().auth().oauth2(TestTokens.admin()).header("If-None-Match", "\"" + version + "\"").when().get("/v1/snapshot").then()
                .statusCode(304);

        put("snap-01", DGX.replace("224000", "200000")).statusCode(200);
        given().auth().oauth2(TestTokens.admin()).header("If-None-Match", "\"" + version + "\"").when().get("/v1/snapshot").then().statusCode(200)
                .header("ETag", containsString(Long.toString(version + 1)))
                .body("version", equalTo((int) version + 1));
    }
}
