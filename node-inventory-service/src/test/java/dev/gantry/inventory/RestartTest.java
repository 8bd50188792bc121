package dev.gantry.inventory;

import static dev.gantry.inventory.Nodes.DGX;
import static dev.gantry.inventory.Nodes.put;
import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.equalTo;

import dev.gantry.testing.TestDatabase;
import dev.gantry.testing.TestTokens;
import io.quarkus.test.common.QuarkusTestResourceLifecycleManager;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import jakarta.inject.Inject;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A restart on the database the previous test application left (no Flyway clean): the snapshot
 * version continues from what was stored before this application started, never below it, and the
 * cluster file named by {@code gantry.inventory.cluster-file} is applied at start. Quarkus runs
 * profiled test classes after the unprofiled ones, so in a full run the database holds their state.
 */
@QuarkusTest
@TestProfile(RestartTest.Restarted.class)
class RestartTest {

    /** Same database, not cleaned; a cluster file at start. */
    public static class Restarted implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of("quarkus.flyway.clean-at-start", "false",
                    "gantry.inventory.cluster-file", Path.of("src/test/resources/cluster/restart-cluster.yaml").toAbsolutePath().toString());
        }

        @Override
        public List<TestResourceEntry> testResources() {
            return List.of(new TestResourceEntry(VersionBeforeStart.class));
        }
    }

    /** Reads the stored version over JDBC before the application starts (-1: no schema yet). */
    public static class VersionBeforeStart implements QuarkusTestResourceLifecycleManager {
        static volatile long version = -1;
        static volatile long nodes = -1;

        @Override
        public Map<String, String> start() {
            String url = "jdbc:postgresql://" + env("GANTRY_DB_HOST", "127.0.0.1") + ":" + env("GANTRY_DB_PORT", "5432")
                    + "/" + System.getProperty("%test.gantry.db.name", "gantry_inventory_test"); // as -D%test.gantry.db.name overrides it
            try (Connection c = DriverManager.getConnection(url, env("GANTRY_DB_USER", "gantry"), env("GANTRY_DB_PASSWORD", "gantry"));
                    ResultSet v = c.createStatement().executeQuery("select version from inventory_version")) {
                version = v.next() ? v.getLong(1) : -1;
                try (ResultSet n = c.createStatement().executeQuery("select count(*) from node")) {
                    nodes = n.next() ? n.getLong(1) : -1;
                }
            } catch (SQLException e) {
                version = -1; // first run on an empty database: nothing to continue from
            }
            return Map.of();
        }

        @Override
        public void stop() {
        }

        private static String env(String name, String fallback) {
            String value = System.getenv(name);
            return value == null || value.isBlank() ? fallback : value;
        }
    }

    @Inject
    TestDatabase db;

    @Test
    void theVersionContinuesFromTheStoredOneAndTheClusterFileIsLoadedAtStart() {
        long before = VersionBeforeStart.version;
        long atStart = given().auth().oauth2(TestTokens.admin()).when().get("/v1/snapshot").then().statusCode(200).extract().jsonPath().getLong("version");
        org.jboss.logging.Logger.getLogger(RestartTest.class).infof("version stored before the restart: %d, after start: %d", before, atStart);
        assertThat(atStart).as("never below the version stored before the restart (%d)", before).isGreaterThanOrEqualTo(Math.max(before, 0));
        if (VersionBeforeStart.nodes > 0) {
            assertThat(db.queryLong("select count(*) from node")).as("nodes survive a restart")
                    .isGreaterThanOrEqualTo(VersionBeforeStart.nodes);
        }

        given().auth().oauth2(TestTokens.admin()).when().get("/v1/nodes/boot-dgx-01").then().statusCode(200)
                .body("gpus", equalTo(8)).body("topology.leaf", equalTo("lf1"));
        assertThat(db.queryString("select source from node where name = 'boot-l4-01'")).isEqualTo("FILE");

        put("after-restart-01", DGX.replace("224000", Long.toString(100_000 + atStart))).statusCode(200);
        long after = given().auth().oauth2(TestTokens.admin()).when().get("/v1/snapshot").then().statusCode(200).extract().jsonPath().getLong("version");
        assertThat(after).isEqualTo(atStart + 1);
    }
}
