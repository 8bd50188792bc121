package dev.gantry.placement.window;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;

import dev.gantry.placement.cluster.Leadership;
import dev.gantry.placement.engine.domain.Node;
import dev.gantry.placement.engine.domain.PendingJob;
import dev.gantry.placement.engine.domain.Queue;
import dev.gantry.placement.engine.domain.RunningJob;
import dev.gantry.placement.engine.domain.RunningTask;
import dev.gantry.placement.engine.domain.Scenario;
import dev.gantry.placement.engine.domain.TaskGroup;
import dev.gantry.testing.TestDatabase;
import dev.gantry.testing.TestTokens;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import io.restassured.path.json.JsonPath;
import io.vertx.mutiny.sqlclient.Pool;
import jakarta.inject.Inject;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * Issue 20: every placement replica answers start-time forecasts, not only the leader that computed
 * them. The leader's forecast goes to the placement database; a replica that never computed one (a
 * store of its own, with nothing in memory) and the REST endpoint read it there; a replica that no
 * longer leads stores nothing; a stored forecast older than three forecast periods is served as stale.
 */
@QuarkusTest
@TestProfile(StartForecastReplicasTest.Quiet.class)
class StartForecastReplicasTest {

    /** An application of its own whose windows do not run (they would store forecasts of their own): stale after 3 x 20 s. */
    public static class Quiet implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of("gantry.placement.window", "off", "gantry.placement.forecast.min-interval", "20s");
        }
    }

    @Inject
    StartForecasts forecasts;

    @Inject
    StartForecastStore store;

    @Inject
    Leadership leadership;

    @Inject
    Pool pool;

    @Inject
    TestDatabase db;

    private static Node node(String name) {
        return new Node(name, "V100", 8, null, null, 64_000, 512_000, null, null, null, null, true, false);
    }

    /** One 8-GPU node held by {@code running} until {@code now + 1000 s}; {@code waiting} needs the whole node. */
    private static Scenario scenario(long now, UUID running, UUID waiting) {
        return new Scenario(Scenario.FORMAT, "replicas", now, List.of(node("fr-1")), List.of(new Queue("fr", 1, 0, null, true, null)),
                List.of(new RunningJob(running.toString(), "fr", 0, false, false, false, now - 100,
                        List.of(new RunningTask("w-0", "fr-1", List.of(0, 1, 2, 3, 4, 5, 6, 7), 1000, 1000, null)))),
                List.of(new PendingJob(waiting.toString(), "fr", 0, now - 10, List.of(new TaskGroup("w", 1, 8, 1000, 1000, null)), 1, null,
                        null, null, false, null, null, false, false, 500L)));
    }

    private static JsonPath rest(UUID... jobs) {
        var request = given().auth().oauth2(TestTokens.service());
        for (UUID job : jobs) {
            request = request.queryParam("job", job.toString());
        }
        return request.when().get("/v1/start-forecasts").then().statusCode(200).extract().jsonPath();
    }

    private static StartForecastStore.Page await(io.smallrye.mutiny.Uni<StartForecastStore.Page> page) {
        return page.await().atMost(Duration.ofSeconds(10));
    }

    @Test
    void theLeadersForecastIsAnsweredByAReplicaThatNeverComputedOneAndADeposedOneStoresNothing() throws Exception {
        long now = Instant.now().getEpochSecond();
        UUID running = UUID.randomUUID();
        UUID waiting = UUID.randomUUID();
        assertThat(leadership.leading()).isTrue();
        forecasts.recompute(scenario(now, running, waiting), null, job -> job.equals(running.toString()) ? now + 1000 : Long.MAX_VALUE);

        // another replica: a store of its own over the same database, nothing in its memory
        StartForecastStore replica = new StartForecastStore(pool, Duration.ofSeconds(2), Duration.ofSeconds(5), 500);
        org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(10))
                .until(() -> !await(replica.read(List.of(waiting), Instant.now())).items().isEmpty());
        StartForecastStore.Page page = await(replica.read(List.of(waiting), Instant.now()));
        assertThat(page.stale()).isFalse();
        assertThat(page.computedAt()).isEqualTo(Instant.ofEpochSecond(now));
        assertThat(page.items()).singleElement().satisfies(e -> {
            assertThat(e.startAt()).isEqualTo(Instant.ofEpochSecond(now + 1000));
            assertThat(e.basis()).isEqualTo("reservation");
            assertThat(e.waitsFor()).containsExactly(running);
        });
        JsonPath viaRest = rest(waiting);
        assertThat(viaRest.getBoolean("stale")).isFalse();
        assertThat(Instant.parse(viaRest.getString("items[0].startAt"))).isEqualTo(Instant.ofEpochSecond(now + 1000));
        assertThat(db.queryLong("select count(*) from start_forecast")).as("one row, replaced").isEqualTo(1);

        // a replica that no longer leads computes for itself at most, and stores nothing
        leadership.depose();
        assertThat(leadership.leading()).isFalse();
        UUID other = UUID.randomUUID();
        forecasts.recompute(scenario(now + 5, running, other), null, job -> now + 1000);
        Thread.sleep(500);
        assertThat(await(replica.read(List.of(), Instant.now())).items()).extracting(StartForecasts.Entry::jobId).containsExactly(waiting);
        assertThat(rest(waiting).getString("items[0].basis")).isEqualTo("reservation");
    }

    @Test
    void aStoredForecastOlderThanThreePeriodsIsServedAsStaleOnEveryReplica() {
        UUID job = UUID.randomUUID();
        Instant computed = Instant.now().minusSeconds(61); // stale after 3 x 20 s
        StartForecasts.Snapshot old = new StartForecasts.Snapshot(computed, 500,
                Map.of(job, new StartForecasts.Entry(job, computed.plusSeconds(60), "releases", List.of(), null)));
        store.save(old, computed).await().atMost(Duration.ofSeconds(10));

        assertThat(store.staleAfter()).isEqualTo(Duration.ofSeconds(60));
        JsonPath page = rest(job);
        assertThat(page.getBoolean("stale")).isTrue();
        assertThat(page.getString("staleReason")).contains("older than 60 s", "the leading placement replica has not forecast since");
        assertThat(page.getString("items[0].jobId")).isEqualTo(job.toString());
        assertThat(page.getString("items[0].startAt")).isNull();
        assertThat(page.getString("items[0].basis")).isEqualTo("unknown");
        assertThat(page.getString("items[0].note")).startsWith("unknown: the last start-time forecast is of");
    }
}
