package dev.gantry.admission;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;

import dev.gantry.contracts.events.EventCodec;
import dev.gantry.contracts.events.EventEnvelope;
import dev.gantry.contracts.jobs.JobQueued;
import io.nats.client.Connection;
import io.nats.client.Nats;
import io.nats.client.Subscription;
import dev.gantry.testing.TestDatabase;
import jakarta.inject.Inject;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.Test;

import static org.awaitility.Awaitility.await;

/** The outbox relay publishes a committed job's {@code jobs.queued} event to the real NATS JetStream. */
@QuarkusTest
class JobQueuedPublishingTest {

    @ConfigProperty(name = "gantry.nats.url")
    String natsUrl;

    @Inject
    TestDatabase db;

    @Test
    void submittedJobIsAnnouncedOnJobsQueuedAndMarkedPublished() throws Exception {
        try (Connection nats = Nats.connect(natsUrl)) {
            Subscription subscription = nats.subscribe("jobs.queued");
            nats.flush(Duration.ofSeconds(2));

            String id = given().auth().oauth2(Tokens.of("alice", "vision")).contentType(ContentType.JSON).body(JobSubmissionTest.VALID_JOB)
                    .when().post("/v1/jobs")
                    .then().statusCode(201)
                    .extract().path("id");

            EventEnvelope<JobQueued> received = null;
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
            while (received == null && System.nanoTime() < deadline) {
                io.nats.client.Message message = subscription.nextMessage(Duration.ofSeconds(1));
                if (message == null) {
                    continue;
                }
                EventEnvelope<JobQueued> event = EventCodec.decode(
                        new String(message.getData(), StandardCharsets.UTF_8), JobQueued.class);
                if (event.subjectId().equals(id)) {
                    received = event;
                    assertThat(message.getHeaders().getFirst("Nats-Msg-Id")).isEqualTo(event.eventId().toString());
                }
            }
            assertThat(received).as("jobs.queued event for job %s", id).isNotNull();
            assertThat(received.type()).isEqualTo("jobs.queued");
            assertThat(received.payload().totalGpus()).isEqualTo(3);
            assertThat(received.payload().minAvailable()).isEqualTo(2);

            await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(db.queryLong(
                    "select count(*) from outbox_event where subject_id = ? and published_at is not null", id)).isEqualTo(1));
        }
    }
}
