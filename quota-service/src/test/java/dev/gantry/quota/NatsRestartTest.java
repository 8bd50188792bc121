package dev.gantry.quota;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.gantry.contracts.events.EventEnvelope;
import dev.gantry.contracts.events.Subjects;
import dev.gantry.testing.PrivateNatsServer;
import dev.gantry.testing.TestDatabase;
import dev.gantry.testing.TestNats;
import io.nats.client.Subscription;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * The service's NATS connection drops (its broker is killed and comes back on the same port and
 * store): the pull consumers must resume and the outbox relay must publish again, without a restart
 * of the service. With jnats 2.25.1 this failed about one reconnect in four: the connection came back
 * but its writer sent nothing more than the renewed subscriptions, so JetStream publishes and acks
 * timed out. The broker here is the test's own; the shared one on 4222 is never touched.
 */
@QuarkusTest
@QuarkusTestResource(value = PrivateNatsServer.class, restrictToAnnotatedClass = true)
class NatsRestartTest {

    /** Injected by the test resource. */
    PrivateNatsServer broker;

    @Inject
    TestDatabase db;

    @Test
    void consumesAndPublishesAgainAfterEachBrokerRestart() throws Exception {
        UUID first = queueJob();
        awaitPending(first);

        for (int restart = 1; restart <= 2; restart++) {
            broker.killServer();
            Thread.sleep(1000); // the service sees its connection drop and starts reconnecting
            broker.startServer();

            // the broker needs a moment for JetStream; the service reconnects within jnats' 2 s wait
            UUID queued = await().atMost(Duration.ofSeconds(10)).ignoreExceptions().until(this::queueJob, id -> true);
            awaitPending(queued);

            // the outbox relay publishes on the renewed connection too (quota.shares goes out every 3 s in tests)
            try (TestNats nats = TestNats.connect(broker.url())) {
                Subscription shares = nats.connection().subscribe(Subjects.QUOTA_SHARES);
                assertThat(shares.nextMessage(Duration.ofSeconds(10)))
                        .as("quota.shares published after broker restart %d", restart).isNotNull();
            }
        }
    }

    private void awaitPending(UUID jobId) {
        await().atMost(Duration.ofSeconds(15)).untilAsserted(() ->
                assertThat(db.queryLong("select count(*) from pending_job where job_id = ?", jobId)).isEqualTo(1));
    }

    private UUID queueJob() throws Exception {
        UUID jobId = UUID.randomUUID();
        Map<String, Object> queued = Map.of("jobId", jobId.toString(), "name", "train", "queue", "restart-team", "owner", "alice",
                "priority", 100, "submittedAt", Instant.now().toString(),
                "taskGroups", List.of(Map.of("name", "worker", "replicas", 1, "gpusPerReplica", 1, "cpuMillis", 0, "memoryMiB", 0)));
        try (TestNats nats = TestNats.connect(broker.url())) {
            nats.publish(EventEnvelope.of(Subjects.JOBS_QUEUED, jobId.toString(), queued));
        }
        return jobId;
    }
}
