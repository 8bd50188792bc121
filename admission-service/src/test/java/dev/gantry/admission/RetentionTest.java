package dev.gantry.admission;

import static org.assertj.core.api.Assertions.assertThat;

import dev.gantry.admission.persistence.IdempotencyKeyRetention;
import dev.gantry.kit.retention.Retention;
import dev.gantry.testing.TestDatabase;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.vertx.VertxContextSupport;
import io.restassured.http.ContentType;
import jakarta.inject.Inject;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** Old published events, processed-event ids and idempotency keys are pruned; nothing unpublished or recent is. */
@QuarkusTest
class RetentionTest {

    @Inject
    TestDatabase db;

    @Inject
    Retention retention;

    @Inject
    IdempotencyKeyRetention keys;

    private String outboxRow(String publishedAgo, String deadLettered) {
        String id = UUID.randomUUID().toString();
        db.execute("insert into outbox_event (event_id, subject, subject_id, envelope, created_at, published_at, attempts, dead_lettered_at) "
                + "values (?::uuid, 'jobs.cancelled', 'retention-test', '{}', now() - interval '30 days', "
                + (publishedAgo == null ? "null" : "now() - interval '" + publishedAgo + "'") + ", 0, "
                + (deadLettered == null ? "null" : "now()") + ")", id);
        return id;
    }

    private long outboxCount(String eventId) {
        return db.queryLong("select count(*) from outbox_event where event_id = ?::uuid", eventId);
    }

    @Test
    void oldPublishedRowsGoUnpublishedAndRecentOnesStay() throws Throwable {
        String oldPublished = outboxRow("4 days", null);
        String recentPublished = outboxRow("1 hour", null);
        // 30 days old and still not out (the broker refuses it: too large): never lost
        String neverPublished = outboxRow(null, null);
        db.execute("update outbox_event set envelope = ? where event_id = ?::uuid", "x".repeat(1_100_000), neverPublished);
        String deadLetter = outboxRow(null, "yes");
        String oldInbox = UUID.randomUUID().toString();
        String recentInbox = UUID.randomUUID().toString();
        db.execute("insert into processed_event (event_id, type, processed_at) values (?::uuid, 'x', now() - interval '9 days')", oldInbox);
        db.execute("insert into processed_event (event_id, type, processed_at) values (?::uuid, 'x', now() - interval '7 days')", recentInbox);
        String job = io.restassured.RestAssured.given().auth().oauth2(Tokens.of("rita", "vision")).contentType(ContentType.JSON)
                .body(JobSubmissionTest.VALID_JOB).when().post("/v1/jobs").then().statusCode(201).extract().path("id");
        {
            db.execute("insert into idempotency_key (owner, key, request_hash, job_id, created_at) "
                    + "values ('retention-test', 'old', 'h', ?::uuid, now() - interval '8 days'), "
                    + "('retention-test', 'new', 'h', ?::uuid, now() - interval '1 day')", job, job);
        }

        VertxContextSupport.subscribeAndAwait(() -> retention.prune());
        VertxContextSupport.subscribeAndAwait(() -> keys.prune());
        {
            assertThat(outboxCount(oldPublished)).isZero();
            assertThat(outboxCount(recentPublished)).isEqualTo(1);
            assertThat(outboxCount(neverPublished)).isEqualTo(1);
            assertThat(outboxCount(deadLetter)).isEqualTo(1);
            assertThat(db.queryLong("select count(*) from processed_event where event_id = ?::uuid", oldInbox)).isZero();
            assertThat(db.queryLong("select count(*) from processed_event where event_id = ?::uuid", recentInbox)).isEqualTo(1);
            assertThat(db.queryString("select string_agg(key, ',') from idempotency_key where owner = 'retention-test'")).isEqualTo("new");
            db.execute("delete from outbox_event where subject_id = 'retention-test'");
        }
    }
}
