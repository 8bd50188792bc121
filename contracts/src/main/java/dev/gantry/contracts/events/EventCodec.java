package dev.gantry.contracts.events;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JavaType;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.datatype.jsr310.JavaTimeModule;

/**
 * JSON form of {@link EventEnvelope}: ISO-8601 instants, unknown payload fields ignored (a newer
 * producer may add fields), missing envelope fields rejected.
 */
public final class EventCodec {

    private static final ObjectMapper MAPPER = new ObjectMapper()
            .registerModule(new JavaTimeModule())
            .disable(SerializationFeature.WRITE_DATES_AS_TIMESTAMPS)
            .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES);

    private EventCodec() {
    }

    public static String encode(EventEnvelope<?> envelope) {
        try {
            return MAPPER.writeValueAsString(envelope);
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException("event cannot be written as JSON: " + e.getOriginalMessage(), e);
        }
    }

    /** Reads an envelope whose payload is of {@code payloadType}; throws {@link MalformedEventException}. */
    public static <P> EventEnvelope<P> decode(String json, Class<P> payloadType) {
        try {
            return checked(MAPPER.readerFor(envelopeOf(payloadType)).readValue(json));
        } catch (JsonProcessingException e) {
            throw new MalformedEventException("malformed event: " + e.getOriginalMessage(), e);
        } catch (IllegalArgumentException | NullPointerException e) {
            throw new MalformedEventException("malformed event: " + e.getMessage(), e);
        }
    }

    /** Reads an envelope already parsed to a JSON tree (what the NATS consumers receive). */
    public static <P> EventEnvelope<P> decode(JsonNode tree, Class<P> payloadType) {
        if (tree == null || tree.isNull() || tree.isMissingNode()) {
            throw new MalformedEventException("event is empty");
        }
        try {
            return checked(MAPPER.readerFor(envelopeOf(payloadType)).readValue(tree));
        } catch (java.io.IOException e) {
            throw new MalformedEventException("malformed event: " + e.getMessage(), e);
        } catch (IllegalArgumentException | NullPointerException e) {
            throw new MalformedEventException("malformed event: " + e.getMessage(), e);
        }
    }

    private static JavaType envelopeOf(Class<?> payloadType) {
        return MAPPER.getTypeFactory().constructParametricType(EventEnvelope.class, payloadType);
    }

    private static <P> EventEnvelope<P> checked(EventEnvelope<P> envelope) {
        if (envelope == null) {
            throw new MalformedEventException("event is empty");
        }
        return envelope;
    }

    /** Serialises a bare payload (the outbox stores payloads this way, ready to wrap). */
    public static String toJson(Object value) {
        try {
            return MAPPER.writeValueAsString(value);
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException("value cannot be written as JSON: " + e.getOriginalMessage(), e);
        }
    }

    /** Reads a bare value written by {@link #toJson}. */
    public static <T> T fromJson(String json, Class<T> type) {
        try {
            return MAPPER.readValue(json, type);
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException("not a readable " + type.getSimpleName() + ": " + e.getOriginalMessage(), e);
        }
    }

    public static ObjectMapper mapper() {
        return MAPPER.copy();
    }
}
