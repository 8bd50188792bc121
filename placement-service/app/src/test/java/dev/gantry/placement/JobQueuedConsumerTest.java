package dev.gantry.placement;

import dev.gantry.testing.FreshTestConsumers;
import dev.gantry.testing.TestTokens;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.common.ResourceArg;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.gantry.contracts.events.EventEnvelope;
import dev.gantry.contracts.events.Subjects;
import dev.gantry.contracts.jobs.JobQueued;
import dev.gantry.testing.TestDatabase;
import dev.gantry.testing.TestNats;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.UUID;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.Test;

/**
 * placement-service consumes {@code jobs.queued} from the real JetStream on its durable consumer and
 * stores each job once, however many times the broker carries the event.
 */
// every test of this module starts with fresh test consumers (global resource)
@QuarkusTestResource(value = FreshTestConsumers.class, initArgs = @ResourceArg(name = "service", value = "placement"))
@QuarkusTest
class JobQueuedConsumerTest {

    @ConfigProperty(name = "gantry.nats.url")
    String natsUrl;

    @Inject
    TestDatabase db;

    @Inject
    MeterRegistry registry;

    private double consumed(String outcome) {
        var counter = registry.find("gantry.events.consumed").tag("stream", "JOBS").tag("outcome", outcome).counter();
        return counter == null ? 0 : counter.count();
    }

    private static EventEnvelope<JobQueued> jobQueued(UUID jobId) {
        JobQueued job = new JobQueued(jobId, "train-" + jobId.toString().substring(0, 8), "normal", "alice", 500,
                Instant.now(), 2, List.of(new JobQueued.TaskGroup("worker", 2, 4, null, 16000, 64000)),
                List.of("A100-SXM4-80GB"), "nvlink", new JobQueued.Network("leaf", "node"), false, java.util.Map.of(),
                List.of(), true, true, 3600L);
        return EventEnvelope.of(Subjects.JOBS_QUEUED, jobId.toString(), job);
    }

    @Test
    void jobQueuedIsStoredOnceEvenWhenDeliveredTwice() throws Exception {
        UUID jobId = UUID.randomUUID();
        EventEnvelope<JobQueued> event = jobQueued(jobId);
        double duplicatesBefore = consumed("duplicate");

        try (TestNats nats = TestNats.connect(natsUrl)) {
            nats.publish(event);
            nats.publish(event); // the same event id again, as a redelivery after a lost ack would bring it
        }

        await().atMost(Duration.ofSeconds(20)).untilAsserted(() ->
                assertThat(consumed("duplicate")).isGreaterThanOrEqualTo(duplicatesBefore + 1));
        assertThat(db.queryLong("select count(*) from pending_job where job_id = ?::uuid", jobId.toString())).isEqualTo(1);
        assertThat(db.queryLong("select total_gpus from pending_job where job_id = ?::uuid", jobId.toString())).isEqualTo(8);
        assertThat(db.queryLong("select count(*) from processed_event where event_id = ?::uuid", event.eventId().toString()))
                .isEqualTo(1);

        given().auth().oauth2(TestTokens.service()).when().get("/v1/pending-jobs").then().statusCode(200)
                .body("jobId", org.hamcrest.Matchers.hasItem(jobId.toString()));
    }

    @Test
    void malformedEventIsAcknowledgedAndCounted() throws Exception {
        double malformedBefore = consumed("malformed");
        try (TestNats nats = TestNats.connect(natsUrl)) {
            io.nats.client.impl.Headers headers = new io.nats.client.impl.Headers();
            headers.put("message.type", "[B");
            nats.connection().jetStream().publish(Subjects.JOBS_QUEUED, headers,
                    "{\"type\":\"jobs.queued\",\"payload\":{}}".getBytes(java.nio.charset.StandardCharsets.UTF_8));
        }
        await().atMost(Duration.ofSeconds(20)).untilAsserted(() ->
                assertThat(consumed("malformed")).isGreaterThanOrEqualTo(malformedBefore + 1));
    }
}
