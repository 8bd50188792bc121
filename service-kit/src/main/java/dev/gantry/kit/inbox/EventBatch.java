package dev.gantry.kit.inbox;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.eclipse.microprofile.reactive.messaging.Message;

/**
 * Messages of one channel taken together, so a consumer can apply them in one transaction and
 * acknowledge them together. The batch acknowledges nothing by itself: {@link EventBatches#apply}
 * acks each message whose change committed and nacks each that did not (JetStream redelivers it).
 */
public record EventBatch<T>(List<Message<T>> messages) {

    public EventBatch {
        messages = List.copyOf(messages);
    }

    public int size() {
        return messages.size();
    }

    public List<T> payloads() {
        return messages.stream().map(Message::getPayload).toList();
    }

    /** All acks sent at once; completes when they are sent (the broker's confirmation is not awaited: a lost ack is a redelivery). */
    CompletionStage<Void> ack(List<Message<T>> applied) {
        return CompletableFuture.allOf(applied.stream().map(m -> m.ack().toCompletableFuture()).toArray(CompletableFuture[]::new));
    }
}
