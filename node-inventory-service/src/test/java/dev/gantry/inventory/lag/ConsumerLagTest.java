package dev.gantry.inventory.lag;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;

import dev.gantry.kit.lag.ConsumerLag;
import io.nats.client.Connection;
import io.nats.client.JetStreamApiException;
import io.nats.client.JetStreamManagement;
import io.nats.client.Nats;
import io.nats.client.api.AckPolicy;
import io.nats.client.api.ConsumerConfiguration;
import io.nats.client.api.StorageType;
import io.nats.client.api.StreamConfiguration;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.Test;

/**
 * service-kit's ConsumerLag on the real broker: events published to a durable nobody consumes
 * raise {@code gantry_consumer_pending_messages} of that durable (issue 18 item 9's consumer lag).
 */
@QuarkusTest
class ConsumerLagTest {

    private static final String STREAM = "GANTRY_LAG_TEST";
    private static final Pattern PENDING = Pattern.compile(
            "(?m)^gantry_consumer_pending_messages\\{consumer=\"lag-test\",stream=\"GANTRY_LAG_TEST\"} (\\S+)$");

    @Inject
    ConsumerLag lag;

    @ConfigProperty(name = "gantry.nats.url")
    String natsUrl;

    @Test
    void eventsADurableHasNotConsumedRaiseItsPendingGauge() throws Exception {
        assertThat(lag.watched()).contains("GANTRY_LAG_TEST/lag-test");
        try (Connection nats = Nats.connect(natsUrl)) {
            JetStreamManagement jsm = nats.jetStreamManagement();
            try {
                jsm.deleteStream(STREAM);
            } catch (JetStreamApiException absent) {
                // first run
            }
            jsm.addStream(StreamConfiguration.builder().name(STREAM).subjects("lagtest.>").storageType(StorageType.Memory)
                    .maxAge(Duration.ofMinutes(10)).build());
            try {
                jsm.addOrUpdateConsumer(STREAM, ConsumerConfiguration.builder().durable("lag-test").ackPolicy(AckPolicy.Explicit).build());
                lag.refresh().await().atMost(Duration.ofSeconds(10));
                assertThat(pending()).isEqualTo(0.0);

                for (int i = 0; i < 7; i++) {
                    nats.jetStream().publish("lagtest.event", ("event " + i).getBytes(StandardCharsets.UTF_8));
                }
                lag.refresh().await().atMost(Duration.ofSeconds(10));
                assertThat(pending()).isEqualTo(7.0);
            } finally {
                jsm.deleteStream(STREAM);
            }
        }
        // the durable is gone: the gauge says it does not know, rather than keeping the last figure
        lag.refresh().await().atMost(Duration.ofSeconds(10));
        assertThat(pending()).isNaN();
    }

    private static double pending() {
        String metrics = given().when().get("/q/metrics").then().statusCode(200).extract().asString();
        Matcher m = PENDING.matcher(metrics);
        assertThat(m.find()).as("gantry_consumer_pending_messages of lag-test in\n" + metrics).isTrue();
        return Double.parseDouble(m.group(1));
    }
}
