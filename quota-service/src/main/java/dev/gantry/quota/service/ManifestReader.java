package dev.gantry.quota.service;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.MappingIterator;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import dev.gantry.contracts.validation.FieldViolation;
import dev.gantry.quota.domain.PriorityClassSpec;
import dev.gantry.contracts.resources.Quantity;
import dev.gantry.quota.domain.QueueSpec;
import dev.gantry.quota.domain.ResourceAmounts;
import dev.gantry.quota.domain.ResourceLimits;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

/**
 * Reads the manifests users already have, as multi-document YAML: Volcano
 * {@code scheduling.volcano.sh/v1beta1 Queue} and Kubernetes {@code scheduling.k8s.io/v1 PriorityClass}.
 * Every problem is collected with the index of its document ({@code documents[2].spec.capability.memory}),
 * so one answer names all of them.
 */
public final class ManifestReader {

    public static final String VOLCANO_V1BETA1 = "scheduling.volcano.sh/v1beta1";
    public static final String SCHEDULING_V1 = "scheduling.k8s.io/v1";
    static final String GPU = "nvidia.com/gpu";
    /** Resource names Gantry does not share; read and ignored with a warning. */
    private static final List<String> KNOWN = List.of("cpu", "memory", GPU);

    private static final YAMLMapper YAML = new YAMLMapper();

    /**
     * A queue read from document {@code index}; {@code parent} is as written (Volcano's implicit "root"
     * included); {@code stateGiven}: the manifest says whether the queue is open.
     */
    public record QueueDocument(int index, QueueSpec spec, boolean stateGiven) {
    }

    public record ClassDocument(int index, PriorityClassSpec spec) {
    }

    public record Manifests(List<QueueDocument> queues, List<ClassDocument> priorityClasses, List<FieldViolation> violations,
            List<String> warnings) {
    }

    /** Thrown when the text is not YAML at all (HTTP 400). */
    public static final class UnreadableYamlException extends RuntimeException {
        public UnreadableYamlException(String message) {
            super(message);
        }
    }

    private ManifestReader() {
    }

    public static Manifests read(String yaml) {
        List<JsonNode> documents = new ArrayList<>();
        try (MappingIterator<JsonNode> it = YAML.readerFor(JsonNode.class).readValues(yaml == null ? "" : yaml)) {
            while (it.hasNextValue()) {
                documents.add(it.nextValue());
            }
        } catch (JsonProcessingException e) {
            throw new UnreadableYamlException("not valid YAML: " + e.getOriginalMessage());
        } catch (IOException | RuntimeException e) {
            throw new UnreadableYamlException("not valid YAML: " + e.getMessage());
        }
        List<QueueDocument> queues = new ArrayList<>();
        List<ClassDocument> classes = new ArrayList<>();
        List<FieldViolation> violations = new ArrayList<>();
        List<String> warnings = new ArrayList<>();
        int kept = 0;
        for (int i = 0; i < documents.size(); i++) {
            JsonNode doc = documents.get(i);
            if (doc == null || doc.isNull() || doc.isMissingNode() || (doc.isObject() && doc.isEmpty())) {
                continue; // an empty document, e.g. after a trailing ---
            }
            kept++;
            String at = "documents[" + i + "]";
            if (!doc.isObject()) {
                violations.add(new FieldViolation(at, "must be a Kubernetes object (apiVersion, kind, metadata, spec)"));
                continue;
            }
            String apiVersion = doc.path("apiVersion").asText("");
            String kind = doc.path("kind").asText("");
            if (VOLCANO_V1BETA1.equals(apiVersion) && "Queue".equals(kind)) {
                QueueDocument queue = queue(i, doc, at, violations, warnings);
                if (queue != null) {
                    queues.add(queue);
                }
            } else if (SCHEDULING_V1.equals(apiVersion) && "PriorityClass".equals(kind)) {
                PriorityClassSpec spec = priorityClass(doc, at, violations);
                if (spec != null) {
                    classes.add(new ClassDocument(i, spec));
                }
            } else {
                violations.add(new FieldViolation(at, "unsupported kind '" + kind + "' (apiVersion '" + apiVersion
                        + "'); supported: Queue (" + VOLCANO_V1BETA1 + "), PriorityClass (" + SCHEDULING_V1 + ")"));
            }
        }
        if (kept == 0) {
            violations.add(new FieldViolation("documents", "no manifests found"));
        }
        return new Manifests(queues, classes, violations, warnings);
    }

    private static String name(JsonNode doc, String at, List<FieldViolation> violations) {
        String name = doc.path("metadata").path("name").asText("");
        if (name.isEmpty()) {
            violations.add(new FieldViolation(at + ".metadata.name", "is required"));
            return null;
        }
        return name;
    }

    private static QueueDocument queue(int index, JsonNode doc, String at, List<FieldViolation> violations, List<String> warnings) {
        String name = name(doc, at, violations);
        JsonNode spec = doc.path("spec");
        int before = violations.size();
        int weight = 1;
        if (spec.has("weight")) {
            if (spec.get("weight").canConvertToInt() && spec.get("weight").isIntegralNumber()) {
                weight = spec.get("weight").asInt();
            } else {
                violations.add(new FieldViolation(at + ".spec.weight", "must be a whole number"));
            }
        }
        boolean reclaimable = !spec.has("reclaimable") || spec.get("reclaimable").asBoolean(true);
        String parent = spec.hasNonNull("parent") ? spec.get("parent").asText() : null;
        Map<String, String> cap = resources(spec.path("capability"), at + ".spec.capability", violations, warnings);
        Map<String, String> guar = resources(spec.path("guarantee").path("resource"), at + ".spec.guarantee.resource", violations, warnings);
        if (spec.has("deserved")) {
            warnings.add(at + ": spec.deserved is ignored; Gantry computes deserved shares by fair share");
        }
        ResourceLimits capability = new ResourceLimits(
                count(cap.get(GPU), at + ".spec.capability." + GPU, violations),
                cpu(cap.get("cpu"), at + ".spec.capability.cpu", violations),
                memory(cap.get("memory"), at + ".spec.capability.memory", violations), Map.of());
        Integer gGpus = count(guar.get(GPU), at + ".spec.guarantee.resource." + GPU, violations);
        Long gCpu = cpu(guar.get("cpu"), at + ".spec.guarantee.resource.cpu", violations);
        Long gMem = memory(guar.get("memory"), at + ".spec.guarantee.resource.memory", violations);
        ResourceAmounts guarantee = new ResourceAmounts(gGpus == null ? 0 : gGpus, gCpu == null ? 0 : gCpu, gMem == null ? 0 : gMem,
                Map.of());
        // Volcano keeps the state in status.state (Open, Closed, Closing); some manifests carry spec.state
        String stateText = spec.hasNonNull("state") ? spec.get("state").asText() : doc.path("status").path("state").asText(null);
        QueueSpec.QueueState state = null;
        if (stateText != null) {
            switch (stateText) {
                case "Open" -> state = QueueSpec.QueueState.OPEN;
                case "Closed", "Closing" -> state = QueueSpec.QueueState.CLOSED;
                default -> violations.add(new FieldViolation(at + ".state", "must be Open, Closed or Closing (was '" + stateText + "')"));
            }
        }
        if (name == null || violations.size() > before) {
            return null;
        }
        return new QueueDocument(index, new QueueSpec(name, parent, weight, guarantee, capability, reclaimable, state, null, null),
                state != null);
    }

    private static Map<String, String> resources(JsonNode node, String at, List<FieldViolation> violations, List<String> warnings) {
        Map<String, String> out = new java.util.LinkedHashMap<>();
        if (node.isMissingNode() || node.isNull()) {
            return out;
        }
        if (!node.isObject()) {
            violations.add(new FieldViolation(at, "must be a map of resource name to quantity"));
            return out;
        }
        for (Iterator<Map.Entry<String, JsonNode>> it = node.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            if (KNOWN.contains(e.getKey())) {
                out.put(e.getKey(), e.getValue().asText());
            } else {
                warnings.add(at + "." + e.getKey() + " is ignored: Gantry shares only cpu, memory and " + GPU);
            }
        }
        return out;
    }

    private static Integer count(String text, String at, List<FieldViolation> violations) {
        if (text == null) {
            return null;
        }
        try {
            return Quantity.wholeCount(text);
        } catch (IllegalArgumentException | ArithmeticException e) {
            violations.add(new FieldViolation(at, e.getMessage()));
            return null;
        }
    }

    private static Long cpu(String text, String at, List<FieldViolation> violations) {
        if (text == null) {
            return null;
        }
        try {
            return Quantity.cpuMillis(text);
        } catch (IllegalArgumentException | ArithmeticException e) {
            violations.add(new FieldViolation(at, e.getMessage()));
            return null;
        }
    }

    private static Long memory(String text, String at, List<FieldViolation> violations) {
        if (text == null) {
            return null;
        }
        try {
            return Quantity.memoryMiB(text);
        } catch (IllegalArgumentException | ArithmeticException e) {
            violations.add(new FieldViolation(at, e.getMessage()));
            return null;
        }
    }

    private static PriorityClassSpec priorityClass(JsonNode doc, String at, List<FieldViolation> violations) {
        String name = name(doc, at, violations);
        JsonNode value = doc.path("value");
        int before = violations.size();
        if (!value.isIntegralNumber() || !value.canConvertToInt()) {
            violations.add(new FieldViolation(at + ".value", "is required and must be a 32-bit whole number"));
        }
        PriorityClassSpec.PreemptionPolicy policy = PriorityClassSpec.PreemptionPolicy.PreemptLowerPriority;
        if (doc.hasNonNull("preemptionPolicy")) {
            try {
                policy = PriorityClassSpec.PreemptionPolicy.valueOf(doc.get("preemptionPolicy").asText());
            } catch (IllegalArgumentException e) {
                violations.add(new FieldViolation(at + ".preemptionPolicy", "must be PreemptLowerPriority or Never"));
            }
        }
        if (name == null || violations.size() > before) {
            return null;
        }
        return new PriorityClassSpec(name, value.asInt(), policy, doc.path("globalDefault").asBoolean(false),
                doc.hasNonNull("description") ? doc.get("description").asText() : null);
    }
}
