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
 * Deletes one service's test consumers ({@code <service>-*-test}) before it starts under test, so
 * the service recreates them with {@code deliver-policy=new} and sees only what is published from
 * now on. Without it a durable test consumer would first replay whatever reached the shared broker
 * since the last run (another module's tests, a developer's running Gantry) into a clean database.
 * The service is named by the resource argument {@code service} (e.g. {@code placement}): only its
 * own consumers go, so one module's tests never pull the consumers from under another's running
 * at the same time on the same broker.
 */
public class FreshTestConsumers implements QuarkusTestResourceLifecycleManager {

    static final List<String> STREAMS = List.of("JOBS", "NODES", "QUOTA", "PLACEMENTS");

    private String service;

    @Override
    public void init(Map<String, String> initArgs) {
        service = initArgs.get("service");
        if (service == null || service.isBlank()) {
            throw new IllegalArgumentException("FreshTestConsumers needs @ResourceArg(name = \"service\", value = \"<consumer prefix>\")");
        }
    }

    @Override
    public Map<String, String> start() {
        deleteConsumers(System.getProperty("gantry.nats.url", "nats://127.0.0.1:4222"), service + "-", "-test");
        return Map.of();
    }

    /** Deletes every durable consumer on Gantry's streams whose name ends with {@code suffix}. */
    public static void deleteConsumers(String natsUrl, String suffix) {
        deleteConsumers(natsUrl, "", suffix);
    }

    /** Deletes every durable consumer on Gantry's streams whose name starts with {@code prefix} and ends with {@code suffix}. */
    public static void deleteConsumers(String natsUrl, String prefix, String suffix) {
        try (Connection connection = Nats.connect(natsUrl)) {
            JetStreamManagement streams = connection.jetStreamManagement();
            List<String> existing = streams.getStreamNames();
            for (String stream : STREAMS) {
                if (!existing.contains(stream)) {
                    continue;
                }
                for (String consumer : streams.getConsumerNames(stream)) {
                    if (consumer.startsWith(prefix) && consumer.endsWith(suffix)) {
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
