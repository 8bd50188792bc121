package dev.gantry.admission.domain;

import com.fasterxml.jackson.databind.JsonNode;
import dev.gantry.contracts.jobs.JobQueued.Network;
import dev.gantry.contracts.jobs.JobQueued.Toleration;
import dev.gantry.contracts.resources.MigProfile;
import dev.gantry.contracts.resources.Quantity;
import dev.gantry.contracts.validation.FieldViolation;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * Reads a Volcano {@code batch.volcano.sh/v1alpha1} Job, as users already write them, into a
 * {@link JobSpec}: {@code spec.minAvailable}, {@code spec.queue}, {@code spec.priorityClassName},
 * and per task its replicas, the first container's image, command and resources
 * ({@code nvidia.com/gpu}, or MIG devices as NVIDIA's device plugin names them in its mixed strategy,
 * {@code nvidia.com/mig-<profile>}; cpu, memory; from limits, else requests), node selector and tolerations;
 * the gang's network locality from {@code spec.networkTopology} or the {@code gantry.dev/*} annotations.
 * What Gantry cannot honour is refused by name rather than silently dropped.
 */
public final class VolcanoJob {

    public static final String API_VERSION = "batch.volcano.sh/v1alpha1";
    private static final String GPU = "nvidia.com/gpu";
    /** Annotations for what Volcano's manifest cannot say: node | leaf | spine | zone, and nvlink | numa | any. */
    static final String NETWORK_REQUIRED = "gantry.dev/network-required";
    static final String NETWORK_PREFERRED = "gantry.dev/network-preferred";
    static final String GPU_TOPOLOGY = "gantry.dev/gpu-topology";
    /** "true": the job checkpoints on SIGTERM and resumes from its checkpoint (Volcano's spec has no such field). */
    static final String CHECKPOINTABLE = "gantry.dev/checkpointable";
    /** "true": placement may stop the job with its checkpoint grace and restart it elsewhere (needs checkpointable). */
    static final String MIGRATABLE = "gantry.dev/migratable";

    private VolcanoJob() {
    }

    public static JobSpec toSpec(JsonNode manifest) {
        List<FieldViolation> errors = new ArrayList<>();
        if (!API_VERSION.equals(manifest.path("apiVersion").asText()) || !"Job".equals(manifest.path("kind").asText())) {
            throw new InvalidSpecException(List.of(new FieldViolation("apiVersion",
                    "expected apiVersion " + API_VERSION + " and kind Job, got " + manifest.path("apiVersion").asText("none")
                            + " " + manifest.path("kind").asText("none"))));
        }
        JsonNode spec = manifest.path("spec");
        String name = manifest.path("metadata").path("name").asText(null);
        JsonNode tasks = spec.path("tasks");
        if (!tasks.isArray() || tasks.isEmpty()) {
            errors.add(new FieldViolation("spec.tasks", "a Volcano job needs at least one task"));
        }
        List<TaskGroupSpec> groups = new ArrayList<>();
        Map<String, String> nodeSelector = new LinkedHashMap<>();
        List<Toleration> tolerations = new ArrayList<>();
        for (int i = 0; i < tasks.size(); i++) {
            String at = "spec.tasks[" + i + "]";
            JsonNode task = tasks.get(i);
            JsonNode podSpec = task.path("template").path("spec");
            JsonNode container = podSpec.path("containers").path(0);
            if (container.isMissingNode()) {
                errors.add(new FieldViolation(at + ".template.spec.containers", "a task needs a container"));
                continue;
            }
            JsonNode resources = container.path("resources");
            String resAt = at + ".template.spec.containers[0].resources";
            int gpus = (int) resource(resources, GPU, Quantity::wholeCount, resAt, errors);
            String[] mig = migResource(resources, resAt, errors);
            String migProfile = null;
            if (mig != null) {
                if (gpus > 0) {
                    errors.add(new FieldViolation(resAt + ".limits." + mig[0], "a container asks for whole GPUs (" + GPU
                            + ") or MIG devices (" + MigProfile.RESOURCE_PREFIX + "<profile>), not both"));
                }
                migProfile = MigProfile.ofResource(mig[0]);
                gpus = (int) resource(resources, mig[0], Quantity::wholeCount, resAt, errors);
            }
            long cpu = resource(resources, "cpu", Quantity::cpuMillis, resAt, errors);
            long memory = resource(resources, "memory", Quantity::memoryMiB, resAt, errors);
            List<String> command = new ArrayList<>();
            container.path("command").forEach(c -> command.add(c.asText()));
            container.path("args").forEach(a -> command.add(a.asText()));
            Map<String, String> env = new LinkedHashMap<>();
            JsonNode envList = container.path("env");
            for (int e = 0; e < envList.size(); e++) {
                JsonNode var = envList.get(e);
                if (var.has("valueFrom")) {
                    errors.add(new FieldViolation(at + ".template.spec.containers[0].env[" + e + "].valueFrom",
                            "is not supported: give the value itself"));
                }
                env.put(var.path("name").asText(""), var.path("value").asText(""));
            }
            groups.add(new TaskGroupSpec(task.path("name").asText(null), task.path("replicas").asInt(1), gpus, null, cpu, memory,
                    container.path("image").asText(null), command, container.path("workingDir").asText(null), env.isEmpty() ? null : env,
                    migProfile));
            podSpec.path("nodeSelector").fields().forEachRemaining(e -> nodeSelector.put(e.getKey(), e.getValue().asText()));
            podSpec.path("tolerations").forEach(t -> tolerations.add(new Toleration(t.path("key").asText(null),
                    t.hasNonNull("value") ? t.get("value").asText() : null)));
        }
        if (!errors.isEmpty()) {
            throw new InvalidSpecException(errors);
        }
        Map<String, String> labels = new LinkedHashMap<>();
        manifest.path("metadata").path("labels").fields().forEachRemaining(e -> labels.put(e.getKey(), e.getValue().asText()));
        JsonNode annotations = manifest.path("metadata").path("annotations");
        return new JobSpec(name, spec.path("queue").asText("default"), null,
                spec.hasNonNull("priorityClassName") ? spec.get("priorityClassName").asText() : null, 0,
                spec.hasNonNull("minAvailable") ? spec.get("minAvailable").asInt() : null,
                groups, List.of(), annotations.path(GPU_TOPOLOGY).asText(null), network(spec, annotations), false, nodeSelector,
                tolerations, true, "true".equals(annotations.path(CHECKPOINTABLE).asText(null)), null, null, labels,
                "true".equals(annotations.path(MIGRATABLE).asText(null)));
    }

    /**
     * The network locality of the gang: Volcano's own {@code spec.networkTopology} (mode hard or
     * soft, {@code highestTierAllowed} 1 = one leaf switch, 2 = one spine, 3 or more = one zone),
     * overridden by Gantry's annotations, which can also ask for a single node. Null when neither says.
     */
    private static Network network(JsonNode spec, JsonNode annotations) {
        String required = null;
        String preferred = null;
        JsonNode topology = spec.path("networkTopology");
        if (topology.isObject()) {
            int tier = topology.path("highestTierAllowed").asInt(1);
            String level = tier <= 1 ? "leaf" : tier == 2 ? "spine" : "zone";
            if ("soft".equals(topology.path("mode").asText("hard"))) {
                preferred = level;
            } else {
                required = level;
            }
        }
        required = annotations.path(NETWORK_REQUIRED).asText(required);
        preferred = annotations.path(NETWORK_PREFERRED).asText(preferred);
        return required == null && preferred == null ? null : new Network(required, preferred);
    }

    /**
     * The container's MIG resource ({@code nvidia.com/mig-1g.10gb}, or {@code nvidia.com/mig-1g.10gb.me} for profile
     * {@code 1g.10gb+me}) as {@code {resource name}}, from limits, else requests; null when it asks for none. More than
     * one MIG resource, or one that names no profile, is a violation.
     */
    private static String[] migResource(JsonNode resources, String at, List<FieldViolation> errors) {
        for (String kind : List.of("limits", "requests")) {
            List<String> names = new ArrayList<>();
            resources.path(kind).fieldNames().forEachRemaining(n -> {
                if (n.startsWith(MigProfile.RESOURCE_PREFIX)) {
                    names.add(n);
                }
            });
            if (names.isEmpty()) {
                continue;
            }
            if (names.size() > 1) {
                errors.add(new FieldViolation(at + "." + kind, "a container asks for MIG devices of one profile, not " + names));
                return null;
            }
            if (MigProfile.ofResource(names.getFirst()) == null) {
                errors.add(new FieldViolation(at + "." + kind + "." + names.getFirst(), "names no MIG profile: NVIDIA's device plugin "
                        + "calls MIG devices " + MigProfile.RESOURCE_PREFIX + "<profile>, e.g. nvidia.com/mig-1g.10gb"));
                return null;
            }
            return new String[] {names.getFirst()};
        }
        return null;
    }

    /** A resource from limits, else requests, else 0; an unreadable quantity is a violation. */
    private static long resource(JsonNode resources, String key, Function<String, Number> parse, String at,
            List<FieldViolation> errors) {
        for (String kind : List.of("limits", "requests")) {
            JsonNode value = resources.path(kind).path(key);
            if (!value.isMissingNode() && !value.isNull()) {
                try {
                    return parse.apply(value.asText()).longValue();
                } catch (IllegalArgumentException e) {
                    errors.add(new FieldViolation(at + "." + kind + "." + key, e.getMessage()));
                    return 0;
                }
            }
        }
        return 0;
    }
}
