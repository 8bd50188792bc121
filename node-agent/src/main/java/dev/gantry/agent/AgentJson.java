package dev.gantry.agent;

import com.fasterxml.jackson.databind.BeanDescription;
import com.fasterxml.jackson.databind.DeserializationConfig;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonDeserializer;
import com.fasterxml.jackson.databind.JsonSerializer;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationConfig;
import com.fasterxml.jackson.databind.deser.BeanDeserializerBase;
import com.fasterxml.jackson.databind.deser.BeanDeserializerModifier;
import com.fasterxml.jackson.databind.module.SimpleModule;
import com.fasterxml.jackson.databind.ser.BeanSerializerModifier;
import com.fasterxml.jackson.databind.ser.std.BeanSerializerBase;
import java.util.Set;

/**
 * The agent's one ObjectMapper. Jackson binds records and beans by reflection, and a native executable reflects only on
 * the classes its reflect-config.json names; that file is generated from {@link #BOUND} (node-agent's
 * {@code NativeImageConfigTest}). The mapper refuses to bind any other class, on the JVM as well, so the JVM's tests fail
 * where the native executable would. Maps, lists, strings, numbers and JSON trees need no reflection.
 */
final class AgentJson {

    /** Every class the agent binds to or from JSON by reflection. */
    static final Set<Class<?>> BOUND = Set.of(Assignment.class);

    static final ObjectMapper MAPPER = new ObjectMapper()
            .configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, false)
            .registerModule(new SimpleModule("gantry-agent-bound-classes")
                    .setDeserializerModifier(new BeanDeserializerModifier() {
                        @Override
                        public JsonDeserializer<?> modifyDeserializer(DeserializationConfig config, BeanDescription bean,
                                JsonDeserializer<?> deserializer) {
                            return deserializer instanceof BeanDeserializerBase ? listed(bean.getBeanClass(), deserializer) : deserializer;
                        }
                    })
                    .setSerializerModifier(new BeanSerializerModifier() {
                        @Override
                        public JsonSerializer<?> modifySerializer(SerializationConfig config, BeanDescription bean,
                                JsonSerializer<?> serializer) {
                            return serializer instanceof BeanSerializerBase ? listed(bean.getBeanClass(), serializer) : serializer;
                        }
                    }));

    private AgentJson() {
    }

    private static <T> T listed(Class<?> type, T binder) {
        if (!BOUND.contains(type)) {
            // Jackson reports an IllegalArgumentException from here as an InvalidDefinitionException (an IOException)
            throw new IllegalArgumentException(type.getName() + " is bound by reflection but not in AgentJson.BOUND: add it there and "
                    + "regenerate the native reflect-config (mvn -pl node-agent test -Dgantry.native.update=true)");
        }
        return binder;
    }
}
