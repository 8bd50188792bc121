package dev.gantry.kit.inbox;

import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.hibernate.reactive.panache.Panache;
import io.quarkus.vertx.core.runtime.context.VertxContextSafetyToggle;
import io.smallrye.common.vertx.VertxContext;
import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.eclipse.microprofile.reactive.messaging.Message;
import org.jboss.logging.Logger;

/**
 * Lets a consumer apply the events of a burst together instead of one transaction (and one
 * synchronous ack) per event, which held placement's jobs consumer to ~40 events/s.
 * <p>
 * {@link #group} turns a channel's messages into batches of at most {@code gantry.events.batch-size}
 * (200), each closed after at most {@code gantry.events.batch-wait} (10 ms), so a lone event waits
 * no longer than that. How many messages are in flight is bounded by the durable's
 * {@code max-ack-pending}, not here. {@link #apply} applies a batch in order in one transaction and
 * acknowledges every message once it committed; if the transaction fails, the batch is applied
 * again one event per transaction, so one event that cannot be applied is nacked (and redelivered)
 * alone while the others go on. Handlers stay idempotent ({@link ProcessedEvents}) because a
 * redelivery or that second pass may meet an event again.
 */
@ApplicationScoped
public class EventBatches {

    private static final Logger LOG = Logger.getLogger(EventBatches.class);

    private final Vertx vertx;
    private final MeterRegistry registry;
    private final int maxSize;
    private final Duration maxWait;

    public EventBatches(Vertx vertx, MeterRegistry registry,
            @ConfigProperty(name = "gantry.events.batch-size", defaultValue = "200") int maxSize,
            @ConfigProperty(name = "gantry.events.batch-wait", defaultValue = "10ms") Duration maxWait) {
        this.vertx = vertx;
        this.registry = registry;
        this.maxSize = maxSize;
        this.maxWait = maxWait;
    }

    /**
     * The messages of a channel as batches, each delivered on its own Vert.x context (Panache opens
     * its session there; the timer that closes a batch runs on no Vert.x thread at all). Batches
     * leave one after another on one event loop, so their order is the channel's.
     */
    public <T> Multi<Message<EventBatch<T>>> group(Multi<Message<T>> messages) {
        Context root = vertx.getOrCreateContext();
        return messages.group().intoLists().of(maxSize, maxWait)
                .select().where(list -> !list.isEmpty())
                // a timed buffer cannot hold back its upstream; the durable's max-ack-pending bounds what waits here
                .onOverflow().bufferUnconditionally()
                .emitOn(task -> {
                    Context own = VertxContext.createNewDuplicatedContext(root);
                    VertxContextSafetyToggle.setContextSafe(own, true);
                    own.runOnContext(ignored -> task.run());
                })
                .map(list -> Message.of(new EventBatch<>(list)));
    }

    /**
     * Applies each payload with {@code applyOne}, in order, in one transaction, and acknowledges the
     * batch after it committed; when that fails, one transaction per event, acking what committed and
     * nacking what did not. Never fails: what was not applied is redelivered by the broker.
     */
    public <T> Uni<Void> apply(String stream, EventBatch<T> batch, Function<T, Uni<Void>> applyOne) {
        return apply(stream, batch, payloads -> inOrder(payloads, applyOne), applyOne);
    }

    /**
     * As {@link #apply(String, EventBatch, Function)}, but the batch's transaction runs
     * {@code applyAll} on every payload at once (in order), so a consumer can apply a burst in a few
     * set-based statements instead of a few round trips per event. {@code applyAll} must have the
     * effect of {@code applyOne} on each payload in turn: when the batch fails, {@code applyOne}
     * applies them one transaction each.
     */
    public <T> Uni<Void> apply(String stream, EventBatch<T> batch, Function<List<T>, Uni<Void>> applyAll,
            Function<T, Uni<Void>> applyOne) {
        DistributionSummary.builder("gantry.events.batch.size").description("events applied in one transaction")
                .tag("stream", stream).register(registry).record(batch.size());
        return Panache.withTransaction(() -> Uni.createFrom().deferred(() -> applyAll.apply(batch.payloads())))
                .map(ignored -> true)
                .onFailure().recoverWithItem(e -> {
                    LOG.warnf("%d %s events could not be applied in one transaction (%s); applying them one at a time",
                            batch.size(), stream, e.toString());
                    return false;
                })
                .chain(together -> together ? acknowledge(batch, batch.messages()) : oneAtATime(batch, applyOne));
    }

    /**
     * Applies events in order inside the caller's transaction: each run of consecutive events that
     * {@code runMember} maps to a value goes to {@code applyRun} at once (a set-based store), every
     * other event to {@code applyOne} on its own between the runs. For an {@code applyAll} of
     * {@link #apply(String, EventBatch, Function, Function)}.
     */
    public static <T, R> Uni<Void> inRuns(List<T> events, Function<T, Optional<R>> runMember, Function<List<R>, Uni<Void>> applyRun,
            Function<T, Uni<Void>> applyOne) {
        Uni<Void> chain = Uni.createFrom().voidItem();
        List<R> run = new ArrayList<>();
        for (T event : events) {
            Optional<R> member = runMember.apply(event);
            if (member.isPresent()) {
                run.add(member.get());
                continue;
            }
            List<R> before = List.copyOf(run);
            run.clear();
            chain = chain.chain(() -> before.isEmpty() ? Uni.createFrom().voidItem() : applyRun.apply(before))
                    .chain(() -> applyOne.apply(event));
        }
        List<R> last = List.copyOf(run);
        return last.isEmpty() ? chain : chain.chain(() -> applyRun.apply(last));
    }

    private static <T> Uni<Void> inOrder(List<T> payloads, Function<T, Uni<Void>> applyOne) {
        Uni<Void> chain = Uni.createFrom().voidItem();
        for (T payload : payloads) {
            chain = chain.chain(() -> Uni.createFrom().deferred(() -> applyOne.apply(payload)));
        }
        return chain;
    }

    private <T> Uni<Void> oneAtATime(EventBatch<T> batch, Function<T, Uni<Void>> applyOne) {
        List<Message<T>> applied = new ArrayList<>();
        Uni<Void> chain = Uni.createFrom().voidItem();
        for (Message<T> message : batch.messages()) {
            chain = chain.chain(() -> Panache.withTransaction(() -> Uni.createFrom().deferred(() -> applyOne.apply(message.getPayload())))
                    .invoke(() -> applied.add(message))
                    .onFailure().recoverWithUni(e -> Uni.createFrom().completionStage(message.nack(e))
                            .onFailure().recoverWithNull().replaceWithVoid()));
        }
        return chain.chain(() -> acknowledge(batch, applied));
    }

    private <T> Uni<Void> acknowledge(EventBatch<T> batch, List<Message<T>> applied) {
        // an ack that does not arrive only means a redelivery, which the inbox turns into a duplicate
        return Uni.createFrom().completionStage(() -> batch.ack(applied))
                .onFailure().recoverWithItem(e -> {
                    LOG.debugf("acks of %d events not confirmed (they will be redelivered and skipped): %s", applied.size(), e.toString());
                    return null;
                });
    }
}
