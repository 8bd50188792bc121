package dev.gantry.inventory;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import dev.gantry.contracts.nodes.NodeInfo;
import dev.gantry.contracts.validation.FieldViolation;
import dev.gantry.inventory.rest.NodeSpec;
import dev.gantry.kit.problem.InvalidRequestException;
import dev.gantry.kit.problem.Problem;
import io.quarkus.runtime.StartupEvent;
import io.quarkus.vertx.VertxContextSupport;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.validation.ConstraintViolation;
import jakarta.validation.Valid;
import jakarta.validation.Validator;
import jakarta.validation.constraints.NotNull;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.jboss.logging.Logger;

/**
 * The cluster-file source: the {@code nodes} array of a scenario file (FORMAT.md), in JSON or
 * YAML, applied declaratively (nodes the file no longer lists, among those it brought, are
 * removed). Loaded at start from {@code gantry.inventory.cluster-file} when set, and on
 * {@code POST /v1/cluster:apply}. A file with any error changes nothing.
 */
@ApplicationScoped
public class ClusterFiles {

    private static final Logger LOG = Logger.getLogger(ClusterFiles.class);

    /** A scenario file read for its nodes; its other sections are allowed and ignored, unknown fields refused. */
    @JsonIgnoreProperties({"queues", "running", "pending", "nowSeconds"})
    public record ClusterFile(String format, String name, @NotNull List<@NotNull @Valid NodeSpec> nodes) {
    }

    private static final ObjectMapper JSON = JsonMapper.builder()
            .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
            .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
            .build();
    private static final ObjectMapper YAML = YAMLMapper.builder()
            .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
            .build();

    private final NodeRegistry registry;
    private final Validator validator;
    private final Optional<Path> startupFile;

    public ClusterFiles(NodeRegistry registry, Validator validator,
            @ConfigProperty(name = "gantry.inventory.cluster-file") Optional<Path> startupFile) {
        this.registry = registry;
        this.validator = validator;
        this.startupFile = startupFile;
    }

    void loadAtStart(@Observes StartupEvent event) throws Throwable {
        if (startupFile.isEmpty()) {
            return;
        }
        Path file = startupFile.get();
        String text = Files.readString(file);
        boolean yaml = !file.getFileName().toString().toLowerCase().endsWith(".json");
        try {
            NodeRegistry.ApplyResult result = VertxContextSupport.subscribeAndAwait(() -> apply(text, yaml));
            LOG.infof("cluster file %s applied at version %d: %d added, %d changed, %d removed, %d unchanged",
                    file, result.version(), result.added().size(), result.changed().size(), result.removed().size(), result.unchanged());
        } catch (InvalidRequestException e) {
            throw new IllegalStateException("cluster file " + file + " is invalid: " + e.getMessage() + " " + e.errors(), e);
        }
    }

    /** Parses, validates and applies a cluster file; nothing is stored if any part of it is wrong. */
    public Uni<NodeRegistry.ApplyResult> apply(String text, boolean yaml) {
        List<NodeInfo> nodes;
        try {
            nodes = parse(text, yaml);
        } catch (InvalidRequestException e) {
            return Uni.createFrom().failure(e);
        }
        return registry.applyClusterFile(nodes);
    }

    /** The nodes a cluster file describes (file-sourced: Ready, no heartbeat); throws {@link InvalidRequestException}. */
    public List<NodeInfo> parse(String text, boolean yaml) {
        if (text == null || text.isBlank()) {
            throw InvalidRequestException.badRequest("nodes", "the cluster file is empty");
        }
        ClusterFile file;
        try {
            file = (yaml ? YAML : JSON).readValue(text, ClusterFile.class);
        } catch (JsonMappingException e) {
            String field = pathOf(e);
            throw InvalidRequestException.badRequest(field.isEmpty() ? "nodes" : field, e.getOriginalMessage());
        } catch (JsonProcessingException e) {
            throw InvalidRequestException.badRequest("nodes", "not valid " + (yaml ? "YAML" : "JSON") + ": " + e.getOriginalMessage());
        }
        if (file == null) {
            throw InvalidRequestException.badRequest("nodes", "the cluster file is empty");
        }
        List<ConstraintViolation<ClusterFile>> invalid = new ArrayList<>(validator.validate(file));
        if (!invalid.isEmpty()) {
            List<Problem.FieldError> errors = invalid.stream()
                    .map(v -> new Problem.FieldError(v.getPropertyPath().toString(), v.getMessage()))
                    .sorted(Comparator.comparing(Problem.FieldError::field)).toList();
            throw new InvalidRequestException(400, errors.getFirst().field() + ": " + errors.getFirst().message(), errors);
        }
        List<FieldViolation> errors = new ArrayList<>();
        if (file.format() != null && !file.format().equals("gantry-scenario/v1")) {
            errors.add(new FieldViolation("format", "must be gantry-scenario/v1"));
        }
        Map<String, Integer> seen = new HashMap<>();
        List<NodeInfo> nodes = new ArrayList<>();
        for (int i = 0; i < file.nodes().size(); i++) {
            NodeSpec spec = file.nodes().get(i);
            String prefix = "nodes[" + i + "].";
            if (spec.name() == null) {
                errors.add(new FieldViolation(prefix + "name", "is required"));
                continue;
            }
            Integer first = seen.putIfAbsent(spec.name(), i);
            if (first != null) {
                errors.add(new FieldViolation(prefix + "name", "'" + spec.name() + "' is already the name of nodes[" + first + "]"));
            }
            nodes.add(spec.describe(spec.name(), prefix, NodeInfo.Health.READY, null, errors));
        }
        if (!errors.isEmpty()) {
            throw InvalidRequestException.unprocessable(errors);
        }
        return nodes;
    }

    private static String pathOf(JsonMappingException e) {
        StringBuilder path = new StringBuilder();
        for (JsonMappingException.Reference ref : e.getPath()) {
            if (ref.getFieldName() != null) {
                if (!path.isEmpty()) {
                    path.append('.');
                }
                path.append(ref.getFieldName());
            } else if (ref.getIndex() >= 0) {
                path.append('[').append(ref.getIndex()).append(']');
            }
        }
        return path.toString();
    }
}
