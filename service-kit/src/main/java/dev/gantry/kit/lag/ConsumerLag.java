package dev.gantry.kit.lag;

import dev.gantry.kit.inbox.DurableConsumerConnector;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkiverse.reactive.messaging.nats.jetstream.client.Client;
import io.quarkus.runtime.Startup;
import io.quarkus.scheduler.Scheduled;
import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.eclipse.microprofile.config.Config;
import org.jboss.logging.Logger;

/**
 * How far each of the service's JetStream durable consumers is behind, read from the broker's
 * consumer info over the extension's own connection: {@code gantry_consumer_pending_messages}
 * (in the stream, not yet delivered) and {@code gantry_consumer_ack_pending_messages} (delivered,
 * not yet acknowledged), tagged by stream and consumer. The durables are the service's incoming
 * channels ({@code mp.messaging.incoming.X.stream} and {@code .consumer}) and any listed in
 * {@code gantry.consumer-lag.consumers} as {@code STREAM/durable}. NaN while the broker cannot say.
 * Every replica reads the same durable, so the alert takes the max per consumer.
 */
@Startup // the gauges exist from the start, not from the first reading
@ApplicationScoped
public class ConsumerLag {

    private static final Logger LOG = Logger.getLogger(ConsumerLag.class);
    private static final Pattern INCOMING = Pattern.compile("^mp\\.messaging\\.incoming\\.([^.]+)\\.consumer$");
    private static final Duration WAIT = Duration.ofSeconds(5);

    /** One durable and its last readings. */
    record Durable(String stream, String consumer, AtomicReference<Double> pending, AtomicReference<Double> ackPending) {
    }

    private final Client client;
    private final List<Durable> durables;

    public ConsumerLag(Client client, Config config, MeterRegistry registry) {
        this.client = client;
        this.durables = durables(config).entrySet().stream().map(e -> {
            String[] streamAndConsumer = e.getKey().split("/", 2);
            Durable d = new Durable(streamAndConsumer[0], streamAndConsumer[1], new AtomicReference<>(Double.NaN),
                    new AtomicReference<>(Double.NaN));
            Gauge.builder("gantry.consumer.pending.messages", d.pending(), AtomicReference::get)
                    .description("messages in the stream the durable consumer has not been delivered yet")
                    .tag("stream", d.stream()).tag("consumer", d.consumer()).register(registry);
            Gauge.builder("gantry.consumer.ack.pending.messages", d.ackPending(), AtomicReference::get)
                    .description("messages delivered to the durable consumer and not acknowledged yet")
                    .tag("stream", d.stream()).tag("consumer", d.consumer()).register(registry);
            return d;
        }).toList();
    }

    /** {@code STREAM/durable} of every incoming JetStream channel and every listed one, in a stable order. */
    static Map<String, Boolean> durables(Config config) {
        Map<String, Boolean> found = new LinkedHashMap<>();
        for (String name : config.getPropertyNames()) {
            Matcher m = INCOMING.matcher(name);
            if (!m.matches()) {
                continue;
            }
            String prefix = "mp.messaging.incoming." + m.group(1) + ".";
            Optional<String> connector = config.getOptionalValue(prefix + "connector", String.class);
            Optional<String> stream = config.getOptionalValue(prefix + "stream", String.class);
            Optional<String> consumer = config.getOptionalValue(name, String.class);
            boolean jetStream = connector.filter(c -> c.equals(DurableConsumerConnector.NAME) || c.equals("quarkus-jetstream")).isPresent();
            if (jetStream && stream.isPresent() && consumer.isPresent()) {
                found.put(stream.get() + "/" + consumer.get(), true);
            }
        }
        config.getOptionalValues("gantry.consumer-lag.consumers", String.class).orElse(List.of()).stream()
                .filter(s -> s.contains("/")).forEach(s -> found.put(s.trim(), true));
        return found;
    }

    /** The durables watched, as {@code STREAM/durable}. */
    public List<String> watched() {
        return durables.stream().map(d -> d.stream() + "/" + d.consumer()).toList();
    }

    @Scheduled(every = "${gantry.consumer-lag.refresh-every:15s}", delayed = "5s", concurrentExecution = Scheduled.ConcurrentExecution.SKIP)
    public Uni<Void> refresh() {
        return Multi.createFrom().iterable(durables).onItem().transformToUniAndConcatenate(this::read).collect().last().replaceWithVoid();
    }

    private Uni<Void> read(Durable d) {
        return client.consumer(d.stream(), d.consumer()).ifNoItem().after(WAIT).fail()
                .invoke(info -> {
                    d.pending().set(info.pending() == null ? Double.NaN : info.pending().doubleValue());
                    d.ackPending().set(info.acknowledgePending() == null ? Double.NaN : info.acknowledgePending().doubleValue());
                })
                .replaceWithVoid()
                .onFailure().recoverWithItem(e -> {
                    LOG.debugf("no consumer info for %s/%s: %s", d.stream(), d.consumer(), e.toString());
                    d.pending().set(Double.NaN);
                    d.ackPending().set(Double.NaN);
                    return null;
                });
    }
}
