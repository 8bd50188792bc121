package dev.gantry.admission;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.gantry.testing.TestDatabase;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import io.restassured.http.ContentType;
import jakarta.inject.Inject;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The outbox relay is woken by a submission: with its poll an hour apart, a submitted job's
 * {@code jobs.queued} still goes out within moments (before, it waited for the next 1 s poll).
 * The job, its history entry, its idempotency key and its outbox row are stored together.
 */
@QuarkusTest
@TestProfile(OutboxWakeUpTest.PollHourly.class)
class OutboxWakeUpTest {

    public static class PollHourly implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of("gantry.outbox.poll-interval", "1h");
        }
    }

    @Inject
    TestDatabase db;

    @Test
    void aSubmissionIsPublishedWithoutWaitingForThePoll() {
        // the poll's first run at start-up is behind us
        await().atMost(Duration.ofSeconds(10)).until(() -> db.queryLong("select count(*) from outbox_event where published_at is null") == 0);
        String key = "wake-" + System.nanoTime();
        String id = given().auth().oauth2(Tokens.of("alice", "vision")).header("Idempotency-Key", key).contentType(ContentType.JSON)
                .body(JobSubmissionTest.VALID_JOB)
                .when().post("/v1/jobs")
                .then().statusCode(201)
                .extract().path("id");

        await().atMost(Duration.ofSeconds(3)).pollInterval(Duration.ofMillis(20)).untilAsserted(() -> assertThat(db.queryLong(
                "select count(*) from outbox_event where subject = 'jobs.queued' and subject_id = ? and published_at is not null", id))
                .isEqualTo(1));
        assertThat(db.queryLong("select count(*) from job_history where job_id = ?::uuid and state = 'QUEUED' and source = 'submitted'", id))
                .isEqualTo(1);
        assertThat(db.queryString("select job_id::text from idempotency_key where owner = 'alice' and key = ?", key)).isEqualTo(id);
        // the event's sequence is its row's id
        assertThat(db.queryString("select (envelope::jsonb ->> 'sequence') = id::text from outbox_event where subject_id = ?", id))
                .isEqualTo("true");

        // the same key again: the same job, nothing stored twice
        String again = given().auth().oauth2(Tokens.of("alice", "vision")).header("Idempotency-Key", key).contentType(ContentType.JSON)
                .body(JobSubmissionTest.VALID_JOB)
                .when().post("/v1/jobs")
                .then().statusCode(200)
                .extract().path("id");
        assertThat(again).isEqualTo(id);
        assertThat(db.queryLong("select count(*) from outbox_event where subject_id = ?", id)).isEqualTo(1);
    }
}
