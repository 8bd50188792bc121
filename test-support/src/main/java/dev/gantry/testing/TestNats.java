package dev.gantry.testing;

import dev.gantry.contracts.events.EventCodec;
import dev.gantry.contracts.events.EventEnvelope;
import io.nats.client.Connection;
import io.nats.client.JetStreamApiException;
import io.nats.client.Nats;
import io.nats.client.api.PublishAck;
import io.nats.client.impl.Headers;
import java.io.IOException;
import java.nio.charset.StandardCharsets;

/**
 * Publishes events on the real NATS JetStream the way another service's outbox relay would, but
 * without its duplicate suppression: a redelivery test needs the broker to carry the same event twice.
 */
public final class TestNats implements AutoCloseable {

    private final Connection connection;

    private TestNats(Connection connection) {
        this.connection = connection;
    }

    public static TestNats connect(String url) throws IOException, InterruptedException {
        return new TestNats(Nats.connect(url));
    }

    /** Publishes the envelope on its type's subject; each call is a new JetStream message. */
    public PublishAck publish(EventEnvelope<?> envelope) throws IOException, JetStreamApiException {
        Headers headers = new Headers();
        headers.put("message.type", "[B");
        return connection.jetStream().publish(envelope.type(), headers,
                EventCodec.encode(envelope).getBytes(StandardCharsets.UTF_8));
    }

    public Connection connection() {
        return connection;
    }

    @Override
    public void close() throws InterruptedException {
        connection.close();
    }
}
