package dev.gantry.kit.lag;

import static org.assertj.core.api.Assertions.assertThat;

import io.smallrye.config.PropertiesConfigSource;
import io.smallrye.config.SmallRyeConfig;
import io.smallrye.config.SmallRyeConfigBuilder;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Which durables service-kit's ConsumerLag watches: those of the active profile's incoming
 * JetStream channels (as the services configure them, with %dev,prod / %test names) and the listed ones.
 * Lives in inventory's tests because service-kit has no test set-up of its own.
 */
class ConsumerLagDurablesTest {

    @Test
    void theActiveProfilesIncomingJetStreamChannelsAndTheListedOnes() {
        SmallRyeConfig config = new SmallRyeConfigBuilder().withProfile("test").withSources(new PropertiesConfigSource(Map.of(
                "mp.messaging.incoming.jobs-in.connector", "gantry-jetstream",
                "mp.messaging.incoming.jobs-in.stream", "JOBS",
                "%dev,prod.mp.messaging.incoming.jobs-in.consumer", "quota-jobs",
                "%test.mp.messaging.incoming.jobs-in.consumer", "quota-jobs-test",
                "mp.messaging.incoming.other-in.connector", "smallrye-in-memory",
                "mp.messaging.incoming.other-in.consumer", "not-nats",
                "gantry.consumer-lag.consumers", "EXTRA/durable-a"), "test", 100)).build();
        assertThat(ConsumerLag.durables(config).keySet()).containsExactlyInAnyOrder("JOBS/quota-jobs-test", "EXTRA/durable-a");
    }
}
