package dev.gantry.kit.inbox;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.nats.client.Connection;
import io.nats.client.JetStreamManagement;
import io.nats.client.Nats;
import io.nats.client.api.AckPolicy;
import io.nats.client.api.ConsumerConfiguration;
import io.nats.client.api.StorageType;
import io.nats.client.api.StreamConfiguration;
import io.quarkiverse.reactive.messaging.nats.jetstream.client.connection.ConnectionImpl;
import io.smallrye.config.PropertiesConfigSource;
import io.smallrye.config.SmallRyeConfigBuilder;
import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.subscription.Cancellable;
import io.vertx.core.Vertx;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import org.eclipse.microprofile.reactive.messaging.Message;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The incoming channels' reader of a durable pull consumer, against the machine's broker
 * ({@code gantry.nats.url}, default 127.0.0.1:4222) on a stream of the test's own.
 */
class DurableConsumerConnectorTest {

    private static final URI BROKER = URI.create(System.getProperty("gantry.nats.url", "nats://127.0.0.1:4222"));

    private final String stream = "KITTEST_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
    private final String durable = "reader";
    private final Vertx vertx = Vertx.vertx();
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private Connection publisher;

    @BeforeEach
    void declareStreamAndDurable() throws Exception {
        publisher = Nats.connect(BROKER.toString());
        JetStreamManagement jsm = publisher.jetStreamManagement();
        jsm.addStream(StreamConfiguration.builder().name(stream).subjects(stream.toLowerCase() + ".>").storageType(StorageType.Memory).build());
        // the services' ack wait: an event the reader drops comes back only after 30 s
        jsm.addOrUpdateConsumer(stream, ConsumerConfiguration.builder().durable(durable).ackPolicy(AckPolicy.Explicit)
                .ackWait(Duration.ofSeconds(30)).build());
    }

    @AfterEach
    void removeStream() throws Exception {
        publisher.jetStreamManagement().deleteStream(stream);
        publisher.close();
        vertx.close().toCompletionStage().toCompletableFuture().join();
    }

    /**
     * The pipeline benchmark's "jobs 30 s late": on a starved machine the broker heard each pull late,
     * and a reader that closes its pull on its own clock (the extension's one-second fetches) lost
     * what the broker sent to the closed pull until the ack wait. Here every pull reaches the broker
     * 400 ms late, events keep arriving for 6 s, and each must be read within 5 s of the last.
     */
    @Test
    void everyEventIsReadWhenTheBrokerHearsThePullsLate() throws Exception {
        try (SlowLink link = new SlowLink(BROKER.getHost(), BROKER.getPort(), Duration.ofMillis(400));
                Connection slow = Nats.connect(link.url())) {
            Set<String> read = ConcurrentHashMap.newKeySet();
            Cancellable reading = channel(slow).subscribe().with(message -> {
                read.add(message.getPayload().path("id").asText());
                message.ack();
            });
            int events = 300;
            for (int i = 0; i < events; i++) {
                publisher.jetStream().publish(stream.toLowerCase() + ".event", ("{\"id\":\"e" + i + "\"}").getBytes(StandardCharsets.UTF_8));
                Thread.sleep(20);
            }
            waitFor(() -> read.size() == events, Duration.ofSeconds(5));
            reading.cancel();
            assertThat(read).as("events read within 5 s of the last one published (a dropped one returns after 30 s)").hasSize(events);
        }
    }

    @Test
    void aMessageThatIsNotJsonIsTerminatedAndTheNextOneIsRead() throws Exception {
        try (Connection connection = Nats.connect(BROKER.toString())) {
            Set<String> read = ConcurrentHashMap.newKeySet();
            Cancellable reading = channel(connection).subscribe().with(message -> {
                read.add(message.getPayload().path("id").asText());
                message.ack();
            });
            publisher.jetStream().publish(stream.toLowerCase() + ".event", "not json {".getBytes(StandardCharsets.UTF_8));
            publisher.jetStream().publish(stream.toLowerCase() + ".event", "{\"id\":\"after\"}".getBytes(StandardCharsets.UTF_8));
            waitFor(() -> read.contains("after"), Duration.ofSeconds(5));
            waitFor(() -> ackPending() == 0, Duration.ofSeconds(5));
            reading.cancel();
            assertThat(read).containsExactly("after");
            assertThat(registry.counter("gantry.events.consumed", "stream", stream, "outcome", "malformed").count()).isEqualTo(1.0);
            assertThat(ackPending()).as("the malformed message was terminated, not left to come back").isZero();
        }
    }

    @SuppressWarnings("unchecked")
    private Multi<Message<JsonNode>> channel(Connection connection) {
        DurableConsumerConnector connector = new DurableConsumerConnector(new ConnectionImpl(connection), vertx, new ObjectMapper(), registry);
        var config = new SmallRyeConfigBuilder().withSources(new PropertiesConfigSource(Map.of(
                "stream", stream, "consumer", durable, "batch-size", "64"), "channel", 100)).build();
        return Multi.createFrom().publisher((java.util.concurrent.Flow.Publisher<Message<JsonNode>>) connector.getPublisher(config));
    }

    private long ackPending() {
        try {
            return publisher.jetStreamManagement().getConsumerInfo(stream, durable).getNumAckPending();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    private static void waitFor(java.util.function.BooleanSupplier condition, Duration atMost) throws Exception {
        long deadline = System.nanoTime() + atMost.toNanos();
        while (!condition.getAsBoolean() && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
    }
}
