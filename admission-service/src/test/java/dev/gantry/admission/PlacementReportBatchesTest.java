package dev.gantry.admission;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import dev.gantry.contracts.events.EventCodec;
import dev.gantry.contracts.events.EventEnvelope;
import dev.gantry.contracts.events.Subjects;
import dev.gantry.contracts.placements.PlacementBound;
import dev.gantry.contracts.placements.PlacementPending;
import dev.gantry.contracts.placements.PlacementReleased;
import dev.gantry.admission.messaging.PlacementEventsConsumer;
import dev.gantry.kit.inbox.EventBatch;
import dev.gantry.testing.TestDatabase;
import dev.gantry.testing.TestNats;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.vertx.VertxContextSupport;
import io.restassured.http.ContentType;
import jakarta.inject.Inject;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.eclipse.microprofile.reactive.messaging.Message;
import org.junit.jupiter.api.Test;

/**
 * Admission applies placement's reports of a burst in batches, each run of job reports in a few
 * statements (issue 18 item 6: one job at a time, admission showed jobs PLACED a minute after
 * placement bound them), with exactly the effect of applying them one by one: in placement's order,
 * once, a stale report changing nothing, every step in the job's history.
 */
@QuarkusTest
class PlacementReportBatchesTest {

    @ConfigProperty(name = "gantry.nats.url")
    String natsUrl;

    @Inject
    TestDatabase db;

    @Inject
    PlacementEventsConsumer consumer;

    private static EventEnvelope<PlacementPending> pending(String id, String reason, long sequence) {
        return EventEnvelope.of(Subjects.PLACEMENTS_PENDING, id, new PlacementPending(UUID.fromString(id), "normal", reason, Instant.now()),
                sequence);
    }

    private static JsonNode tree(EventEnvelope<?> envelope) throws Exception {
        return EventCodec.mapper().readTree(EventCodec.encode(envelope));
    }

    /** Messages that remember whether they were acked or nacked, as the broker would see it. */
    private static final class Outcomes {
        final Set<String> acked = ConcurrentHashMap.newKeySet();
        final Set<String> nacked = ConcurrentHashMap.newKeySet();

        Message<JsonNode> message(String name, EventEnvelope<?> envelope) throws Exception {
            return Message.of(tree(envelope), () -> {
                acked.add(name);
                return CompletableFuture.completedFuture(null);
            }, reason -> {
                nacked.add(name);
                return CompletableFuture.completedFuture(null);
            });
        }
    }

    private String state(String id) {
        return db.queryString("select state from job where id = ?::uuid", id);
    }

    private List<String> history(String id) {
        return given().auth().oauth2(Tokens.of("alice", "vision")).when().get("/v1/jobs/" + id + "/history").then().statusCode(200)
                .extract().jsonPath().getList("state");
    }

    @Test
    void aBatchOfReportsHasTheEffectOfApplyingThemOneByOne() throws Throwable {
        String runs = LifecycleEventsTest.submit();       // bound, then completed with exit code 0, in one batch
        String reversed = LifecycleEventsTest.submit();   // completed delivered before bound: the late bound is stale
        String waiting = LifecycleEventsTest.submit();    // a reason, then the same reason again, then bound
        String twice = LifecycleEventsTest.submit();      // bound, then the same event redelivered in the batch
        UUID unknown = UUID.randomUUID();
        EventEnvelope<PlacementBound> twiceBound = LifecycleEventsTest.bound(twice, 3);
        EventEnvelope<PlacementBound> seenBefore = LifecycleEventsTest.bound(waiting, 1);
        db.execute("insert into processed_event (event_id, type, processed_at) values (?::uuid, 'placements.bound', now())",
                seenBefore.eventId().toString());

        Outcomes outcomes = new Outcomes();
        EventEnvelope<PlacementReleased> completed = EventEnvelope.of(Subjects.PLACEMENTS_COMPLETED, runs,
                new PlacementReleased(UUID.fromString(runs), "normal", "completed", Instant.now(), 0), 2);
        EventBatch<JsonNode> batch = new EventBatch<>(List.of(
                outcomes.message("runs-bound", LifecycleEventsTest.bound(runs, 1)),
                outcomes.message("reversed-completed", LifecycleEventsTest.released(Subjects.PLACEMENTS_COMPLETED, reversed, "completed", 11)),
                outcomes.message("waiting-seen", seenBefore),
                outcomes.message("waiting-reason", pending(waiting, "the best node has 2 free", 4)),
                outcomes.message("twice-bound", twiceBound),
                outcomes.message("runs-completed", completed),
                outcomes.message("unknown", LifecycleEventsTest.bound(unknown.toString(), 5)),
                outcomes.message("reversed-bound", LifecycleEventsTest.bound(reversed, 10)),
                outcomes.message("waiting-reason-again", pending(waiting, "the best node has 2 free", 5)),
                outcomes.message("twice-again", twiceBound),
                outcomes.message("waiting-bound", LifecycleEventsTest.bound(waiting, 6))));

        VertxContextSupport.subscribeAndAwait(() -> consumer.onPlacementEvents(batch));

        assertThat(outcomes.nacked).isEmpty();
        assertThat(outcomes.acked).hasSize(11);
        assertThat(state(runs)).isEqualTo("SUCCEEDED");
        assertThat(db.queryLong("select exit_code from job where id = ?::uuid", runs)).isZero();
        assertThat(db.queryLong("select attempts from job where id = ?::uuid", runs)).isEqualTo(1);
        assertThat(db.queryString("select placement from job where id = ?::uuid", runs)).contains("\"attempt\":1");
        assertThat(history(runs)).containsExactly("QUEUED", "PLACED", "SUCCEEDED");

        assertThat(state(reversed)).isEqualTo("SUCCEEDED");
        assertThat(db.queryLong("select placement_sequence from job where id = ?::uuid", reversed)).isEqualTo(11);
        assertThat(db.queryLong("select attempts from job where id = ?::uuid", reversed)).isZero();
        assertThat(history(reversed)).containsExactly("QUEUED", "SUCCEEDED");

        // the event seen before changed nothing; the repeated reason added no step; bound ends the wait
        assertThat(state(waiting)).isEqualTo("PLACED");
        assertThat(db.queryString("select pending_reason from job where id = ?::uuid", waiting)).isNull();
        assertThat(history(waiting)).containsExactly("QUEUED", "PLACED");

        assertThat(state(twice)).isEqualTo("PLACED");
        assertThat(db.queryLong("select attempts from job where id = ?::uuid", twice)).isEqualTo(1);
        assertThat(db.queryLong("select count(*) from processed_event where event_id = ?::uuid", twiceBound.eventId().toString()))
                .isEqualTo(1);
        // an entity read after the batch sees the batch's writes (the version moved with them)
        assertThat(db.queryLong("select version from job where id = ?::uuid", runs)).isPositive();
        given().auth().oauth2(Tokens.of("alice", "vision")).when().delete("/v1/jobs/" + twice).then().statusCode(200);
        assertThat(state(twice)).isEqualTo("CANCELLED");
    }

    @Test
    void aBurstOfReportsIsAppliedInFarFewerTransactionsThanEvents() throws Exception {
        List<String> jobs = new ArrayList<>();
        for (int i = 0; i < 60; i++) {
            jobs.add(LifecycleEventsTest.submit());
        }
        try (TestNats nats = TestNats.connect(natsUrl)) {
            for (String id : jobs) {
                nats.publish(LifecycleEventsTest.bound(id, 1));
            }
        }
        String ids = jobs.stream().map(id -> "'" + id + "'").collect(Collectors.joining(","));
        await().atMost(Duration.ofSeconds(45)).untilAsserted(() ->
                assertThat(db.queryLong("select count(*) from job where state = 'PLACED' and id in (" + ids + ")")).isEqualTo(60));
        // rows a transaction wrote share its id (xmin): a burst takes a handful of transactions, not one per report
        long transactions = db.queryLong("select count(distinct xmin::text) from job where id in (" + ids + ")");
        assertThat(transactions).as("transactions that placed 60 jobs").isLessThanOrEqualTo(12);
    }
}
