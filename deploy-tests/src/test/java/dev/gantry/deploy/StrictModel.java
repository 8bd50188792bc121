package dev.gantry.deploy;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.BeanDescription;
import com.fasterxml.jackson.databind.DeserializationConfig;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.MappingIterator;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.deser.BeanDeserializerBuilder;
import com.fasterxml.jackson.databind.deser.BeanDeserializerModifier;
import com.fasterxml.jackson.databind.module.SimpleModule;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceAccount;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.fabric8.kubernetes.api.model.rbac.ClusterRole;
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBinding;
import io.fabric8.kubernetes.api.model.rbac.Role;
import io.fabric8.kubernetes.api.model.rbac.RoleBinding;
import io.fabric8.openshift.api.model.monitoring.v1.PrometheusRule;
import io.fabric8.openshift.api.model.monitoring.v1.ServiceMonitor;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Reads rendered manifests into the fabric8 Kubernetes model, strictly: a field the model does not
 * know (a typo, a field of another API version, a wrong indentation) fails instead of landing
 * silently in the model's catch-all {@code additionalProperties}, as fabric8's own parser lets it.
 */
final class StrictModel {

    /** apiVersion/kind -> model class: every kind Gantry deploys; any other kind fails the parse. */
    private static final Map<String, Class<? extends HasMetadata>> KINDS = Map.ofEntries(
            Map.entry("v1/Namespace", Namespace.class),
            Map.entry("v1/ServiceAccount", ServiceAccount.class),
            Map.entry("v1/Service", Service.class),
            Map.entry("v1/ConfigMap", ConfigMap.class),
            Map.entry("v1/Secret", Secret.class),
            Map.entry("apps/v1/Deployment", Deployment.class),
            Map.entry("apps/v1/StatefulSet", StatefulSet.class),
            Map.entry("rbac.authorization.k8s.io/v1/Role", Role.class),
            Map.entry("rbac.authorization.k8s.io/v1/ClusterRole", ClusterRole.class),
            Map.entry("rbac.authorization.k8s.io/v1/RoleBinding", RoleBinding.class),
            Map.entry("rbac.authorization.k8s.io/v1/ClusterRoleBinding", ClusterRoleBinding.class),
            Map.entry("networking.k8s.io/v1/NetworkPolicy", NetworkPolicy.class),
            Map.entry("policy/v1/PodDisruptionBudget", PodDisruptionBudget.class),
            Map.entry("monitoring.coreos.com/v1/ServiceMonitor", ServiceMonitor.class),
            Map.entry("monitoring.coreos.com/v1/PrometheusRule", PrometheusRule.class));

    private static final ObjectMapper MAPPER = new ObjectMapper(new YAMLFactory())
            .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
            .enable(DeserializationFeature.FAIL_ON_NULL_FOR_PRIMITIVES)
            .registerModule(new SimpleModule("no-catch-all").setDeserializerModifier(new BeanDeserializerModifier() {
                @Override
                public BeanDeserializerBuilder updateBuilder(DeserializationConfig config, BeanDescription bean,
                        BeanDeserializerBuilder builder) {
                    // fabric8 classes collect unknown fields with @JsonAnySetter; without it Jackson fails on them
                    builder.setAnySetter(null);
                    return builder;
                }
            }));

    private StrictModel() {
    }

    /** Every document of a YAML stream as its model object; IllegalArgumentException names the first bad one. */
    static List<HasMetadata> parse(String yaml) {
        List<HasMetadata> objects = new ArrayList<>();
        try (MappingIterator<JsonNode> documents = MAPPER.readerFor(JsonNode.class).readValues(yaml)) {
            while (documents.hasNext()) {
                JsonNode document = documents.next();
                if (document == null || document.isNull() || document.isEmpty()) {
                    continue;
                }
                objects.add(parse(document));
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return objects;
    }

    private static HasMetadata parse(JsonNode document) {
        String type = document.path("apiVersion").asText() + "/" + document.path("kind").asText();
        String name = document.path("metadata").path("name").asText("?");
        Class<? extends HasMetadata> model = KINDS.get(type);
        if (model == null) {
            throw new IllegalArgumentException(type + " " + name + ": not a kind Gantry deploys");
        }
        try {
            return MAPPER.treeToValue(document, model);
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException(type + " " + name + ": " + e.getOriginalMessage(), e);
        }
    }

    /** A JSON document (the dashboard) as a tree. */
    static JsonNode json(String text) {
        try {
            return new ObjectMapper().readTree(text);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
