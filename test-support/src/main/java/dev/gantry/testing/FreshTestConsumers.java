package dev.gantry.testing;

import io.nats.client.Connection;
import io.nats.client.JetStreamApiException;
import io.nats.client.JetStreamManagement;
import io.nats.client.Nats;
import io.quarkus.test.common.QuarkusTestResourceLifecycleManager;
import java.io.IOException;
import java.util.List;
import java.util.Map;

/**
 * Deletes the tests' durable consumers ({@code *-test}) before a service starts under test, so the
 * service recreates them with {@code deliver-policy=new} and sees only what is published from now
 * on. Without it a durable test consumer would first replay whatever reached the shared broker
 * since the last run (another module's tests, a developer's running Gantry) into a clean database.
 */
public class FreshTestConsumers implements QuarkusTestResourceLifecycleManager {

    static final List<String> STREAMS = List.of("JOBS", "NODES", "QUOTA", "PLACEMENTS");

    @Override
    public Map<String, String> start() {
        deleteConsumers(System.getProperty("gantry.nats.url", "nats://127.0.0.1:4222"), "-test");
        return Map.of();
    }

    /** Deletes every durable consumer on Gantry's streams whose name ends with {@code suffix}. */
    public static void deleteConsumers(String natsUrl, String suffix) {
        try (Connection connection = Nats.connect(natsUrl)) {
            JetStreamManagement streams = connection.jetStreamManagement();
            List<String> existing = streams.getStreamNames();
            for (String stream : STREAMS) {
                if (!existing.contains(stream)) {
                    continue;
                }
                for (String consumer : streams.getConsumerNames(stream)) {
                    if (consumer.endsWith(suffix)) {
                        streams.deleteConsumer(stream, consumer);
                    }
                }
            }
        } catch (IOException | JetStreamApiException e) {
            throw new IllegalStateException("cannot reset the test consumers on " + natsUrl, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while resetting the test consumers", e);
        }
    }

    @Override
    public void stop() {
        // the consumers stay: the next start deletes them again
    }
}
