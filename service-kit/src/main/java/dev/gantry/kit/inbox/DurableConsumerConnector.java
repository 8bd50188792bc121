package dev.gantry.kit.inbox;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.micrometer.core.instrument.MeterRegistry;
import io.nats.client.ConsumeOptions;
import io.nats.client.Connection;
import io.nats.client.MessageConsumer;
import io.quarkus.vertx.core.runtime.context.VertxContextSafetyToggle;
import io.smallrye.common.vertx.VertxContext;
import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.subscription.MultiEmitter;
import io.smallrye.reactive.messaging.connector.InboundConnector;
import io.smallrye.reactive.messaging.providers.locals.LocalContextMetadata;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import jakarta.enterprise.context.ApplicationScoped;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Flow;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.eclipse.microprofile.config.Config;
import org.eclipse.microprofile.reactive.messaging.Message;
import org.eclipse.microprofile.reactive.messaging.Metadata;
import org.eclipse.microprofile.reactive.messaging.spi.Connector;
import org.jboss.logging.Logger;

/**
 * An incoming channel on an existing JetStream durable pull consumer (declared, as before, under
 * {@code quarkus.messaging.nats.streams.S.pull-consumers.D}), read with the client's continuous
 * {@code consume()} instead of the extension's loop of one-second fetches.
 * <p>
 * Why: a fetch ends on the client's clock, which starts before the broker receives the pull. On a
 * busy machine the broker kept delivering to a pull the client had already closed; those events
 * were dropped in the client and came back only after the ack wait (30 s). The pipeline benchmark
 * saw a few jobs per burst reach placement, or PLACED in admission, 30 s late. {@code consume()}
 * keeps one subscription open and pulls again before its batch runs out, so nothing is sent to a
 * closed pull. The extension's message also acknowledged with {@code ackSync} on the event loop, a
 * round trip per event; here an ack is sent without waiting (a lost ack is a redelivery, which
 * the inbox skips).
 * <p>
 * Channel attributes: {@code stream}, {@code consumer} (the durable), {@code batch-size}
 * (messages pulled at a time, default 256), {@code pull-expires} (default 5 s: a broker that lost
 * the pull, e.g. restarted, is noticed after three missed heartbeats of half that). Payloads are JSON ({@link JsonNode}); one that is not
 * is terminated (never redelivered) and counted as malformed. Each message is emitted on its own
 * duplicated Vert.x context of one event loop, in the order received, so Panache can run there.
 */
@ApplicationScoped
@Connector(DurableConsumerConnector.NAME)
public class DurableConsumerConnector implements InboundConnector {

    public static final String NAME = "gantry-jetstream";
    private static final Logger LOG = Logger.getLogger(DurableConsumerConnector.class);
    private static final Duration RETRY = Duration.ofSeconds(1);

    private final Connection connection;
    private final Vertx vertx;
    private final ObjectMapper json;
    private final MeterRegistry registry;

    public DurableConsumerConnector(io.quarkiverse.reactive.messaging.nats.jetstream.client.connection.Connection connection,
            Vertx vertx, ObjectMapper json, MeterRegistry registry) {
        this.connection = connection;
        this.vertx = vertx;
        this.json = json;
        this.registry = registry;
    }

    @Override
    public Flow.Publisher<? extends Message<?>> getPublisher(Config config) {
        String stream = config.getValue("stream", String.class);
        String durable = config.getValue("consumer", String.class);
        ConsumeOptions options = ConsumeOptions.builder()
                .batchSize(config.getOptionalValue("batch-size", Integer.class).orElse(256))
                // the broker's idle heartbeat is half of this; three missed ones (a broker restarted, its pulls
                // gone) make the client pull again: 5 s resumes within ~8 s instead of the default's 45
                .expiresIn(config.getOptionalValue("pull-expires", Duration.class).orElse(Duration.ofSeconds(5)).toMillis())
                .build();
        return Multi.createFrom().<Message<JsonNode>>emitter(emitter -> new Subscription(stream, durable, options, emitter).start());
    }

    /** One channel's open {@code consume()}; started again after a failure until the channel is cancelled. */
    private final class Subscription {
        private final String stream;
        private final String durable;
        private final ConsumeOptions options;
        private final MultiEmitter<? super Message<JsonNode>> emitter;
        private final Context root;
        private final AtomicReference<MessageConsumer> open = new AtomicReference<>();
        private final AtomicBoolean cancelled = new AtomicBoolean();

        Subscription(String stream, String durable, ConsumeOptions options, MultiEmitter<? super Message<JsonNode>> emitter) {
            this.stream = stream;
            this.durable = durable;
            this.options = options;
            this.emitter = emitter;
            this.root = vertx.getOrCreateContext();
            emitter.onTermination(this::stop);
        }

        void start() {
            if (cancelled.get()) {
                return;
            }
            try {
                MessageConsumer consumer = connection.getConsumerContext(stream, durable)
                        .consume(options, this::received);
                open.set(consumer);
                if (cancelled.get()) {
                    stop();
                }
            } catch (IOException | io.nats.client.JetStreamApiException | RuntimeException e) {
                // the durable may not exist yet (the extension declares it at start) or the broker is away
                LOG.warnf("cannot consume %s/%s yet (%s); trying again in %s", stream, durable, e.toString(), RETRY);
                vertx.setTimer(RETRY.toMillis(), ignored -> start());
            }
        }

        private void received(io.nats.client.Message delivered) {
            JsonNode payload;
            try {
                payload = json.readTree(delivered.getData());
            } catch (IOException | RuntimeException e) {
                registry.counter("gantry.events.consumed", "stream", stream, "outcome", "malformed").increment();
                LOG.errorf("terminating a message on %s/%s that is not JSON (%s)", stream, durable, e.getMessage());
                delivered.term();
                return;
            }
            Context own = VertxContext.createNewDuplicatedContext(root);
            VertxContextSafetyToggle.setContextSafe(own, true);
            Message<JsonNode> message = Message.of(payload, Metadata.of(new LocalContextMetadata(own)),
                    () -> settle(delivered::ack), reason -> settle(delivered::nak));
            // one event loop, in arrival order: runOnContext keeps the order of the calls
            own.runOnContext(ignored -> emitter.emit(message));
        }

        private CompletableFuture<Void> settle(Runnable reply) {
            try {
                reply.run();
                return CompletableFuture.completedFuture(null);
            } catch (RuntimeException e) {
                return CompletableFuture.failedFuture(e);
            }
        }

        private void stop() {
            cancelled.set(true);
            MessageConsumer consumer = open.getAndSet(null);
            if (consumer != null) {
                try {
                    consumer.close();
                } catch (Exception e) {
                    LOG.debugf("closing the consumer of %s/%s: %s", stream, durable, e.toString());
                }
            }
        }
    }
}
