package dev.gantry.placement.engine.json;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.gantry.placement.engine.domain.GpuTopology;
import dev.gantry.placement.engine.domain.MigDevice;
import dev.gantry.placement.engine.domain.Network;
import dev.gantry.placement.engine.domain.NetworkLevel;
import dev.gantry.placement.engine.domain.Node;
import dev.gantry.placement.engine.domain.PendingJob;
import dev.gantry.placement.engine.domain.Queue;
import dev.gantry.placement.engine.domain.RunningJob;
import dev.gantry.placement.engine.domain.RunningTask;
import dev.gantry.placement.engine.domain.Scenario;
import dev.gantry.placement.engine.domain.Taint;
import dev.gantry.placement.engine.domain.TaskGroup;
import dev.gantry.placement.engine.domain.Toleration;
import dev.gantry.placement.engine.domain.Topology;
import dev.gantry.placement.engine.validation.ScenarioValidator;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Reads and writes {@code gantry-scenario/v1} (FORMAT.md). Reading validates everything: types,
 * limits and cross references ({@link ScenarioValidator}); a scenario with any violation is
 * rejected whole with a {@link ScenarioValidationException}.
 */
public final class ScenarioCodec {
    private static final ObjectMapper MAPPER = new ObjectMapper();

    private ScenarioCodec() {
    }

    public static Scenario read(byte[] json) {
        return read(new String(json, StandardCharsets.UTF_8));
    }

    public static Scenario read(Path file) throws IOException {
        return read(Files.readAllBytes(file));
    }

    public static Scenario read(String json) {
        JsonNode root;
        try {
            root = MAPPER.readTree(json);
        } catch (JsonProcessingException e) {
            String msg = e.getOriginalMessage() == null ? "unreadable" : e.getOriginalMessage().replace('\n', ' ');
            throw new ScenarioValidationException(List.of(new Violation("$", "not valid JSON: " + msg)));
        }
        if (root == null || !root.isObject()) {
            throw new ScenarioValidationException(List.of(new Violation("$", "must be a JSON object")));
        }
        JsonReader r = new JsonReader();
        Scenario scenario = parse(r, root);
        if (!r.violations.isEmpty()) {
            throw new ScenarioValidationException(r.violations);
        }
        List<Violation> semantic = ScenarioValidator.validate(scenario);
        if (!semantic.isEmpty()) {
            throw new ScenarioValidationException(semantic);
        }
        return scenario;
    }

    private static Scenario parse(JsonReader r, JsonNode root) {
        String format = r.string(root, "", "format", null);
        if (format == null) {
            r.bad("format", "is required (gantry-scenario/v1)");
        } else if (!Scenario.FORMAT.equals(format)) {
            r.bad("format", "must be " + Scenario.FORMAT + ", got " + format);
        }
        String name = r.string(root, "", "name", "scenario");
        long now = r.longIn(root, "", "nowSeconds", 0, Long.MIN_VALUE, Long.MAX_VALUE);
        List<Node> nodes = r.array(root, "", "nodes", (v, p) -> node(r, v, p));
        List<Queue> queues = r.array(root, "", "queues", (v, p) -> queue(r, v, p));
        List<RunningJob> running = r.array(root, "", "running", (v, p) -> runningJob(r, v, p));
        List<PendingJob> pending = r.array(root, "", "pending", (v, p) -> pendingJob(r, v, p));
        return new Scenario(format, name, now, nodes, queues, running, pending);
    }

    private static Node node(JsonReader r, JsonNode v, String p) {
        if (r.object(v, p) == null) {
            return null;
        }
        int gpus = r.intIn(v, p, "gpus", 0, 0, 64);
        List<List<Integer>> islands = r.optionalArray(v, p, "nvlinkIslands", (g, gp) -> indexGroup(r, g, gp));
        List<List<Integer>> numa = r.optionalArray(v, p, "numaNodes", (g, gp) -> indexGroup(r, g, gp));
        Topology topology = Topology.UNKNOWN;
        if (!JsonReader.absent(v, "topology")) {
            JsonNode t = r.object(v.get("topology"), JsonReader.at(p, "topology"));
            if (t != null) {
                String tp = JsonReader.at(p, "topology");
                topology = new Topology(r.string(t, tp, "zone", null), r.string(t, tp, "spine", null), r.string(t, tp, "leaf", null));
            }
        }
        List<Taint> taints = r.array(v, p, "taints", (t, tp) -> r.object(t, tp) == null ? null
                : new Taint(r.requiredString(t, tp, "key"), r.string(t, tp, "value", null), r.string(t, tp, "effect", "NoSchedule")));
        return new Node(
                r.requiredString(v, p, "name"),
                r.string(v, p, "gpuModel", null),
                gpus,
                islands,
                numa,
                r.longIn(v, p, "cpuMillis", Long.MAX_VALUE, 0, Long.MAX_VALUE),
                r.longIn(v, p, "memoryMiB", Long.MAX_VALUE, 0, Long.MAX_VALUE),
                topology,
                r.string(v, p, "ibFabric", null),
                r.stringMap(v, p, "labels"),
                taints,
                r.bool(v, p, "schedulable", true),
                r.bool(v, p, "gpuSharing", false),
                r.array(v, p, "migDevices", (d, dp) -> r.object(d, dp) == null ? null
                        : new MigDevice(r.requiredString(d, dp, "id"), r.intIn(d, dp, "gpu", -1, 0, 63), r.requiredString(d, dp, "profile"))));
    }

    private static List<Integer> indexGroup(JsonReader r, JsonNode g, String p) {
        if (g == null || !g.isArray()) {
            r.bad(p, "must be an array of GPU indices");
            return null;
        }
        List<Integer> out = new ArrayList<>();
        for (int i = 0; i < g.size(); i++) {
            Integer x = r.intElement(g.get(i), p + "[" + i + "]", 0, 63);
            if (x != null) {
                out.add(x);
            }
        }
        return out;
    }

    private static Queue queue(JsonReader r, JsonNode v, String p) {
        if (r.object(v, p) == null) {
            return null;
        }
        Long cap = r.optionalLong(v, p, "capabilityGpus", 0, Integer.MAX_VALUE);
        return new Queue(
                r.requiredString(v, p, "name"),
                r.positiveNumber(v, p, "weight", 1),
                r.intIn(v, p, "guaranteeGpus", 0, 0, Integer.MAX_VALUE),
                cap == null ? null : cap.intValue(),
                r.bool(v, p, "reclaimable", true),
                r.string(v, p, "parent", null));
    }

    private static RunningJob runningJob(JsonReader r, JsonNode v, String p) {
        if (r.object(v, p) == null) {
            return null;
        }
        List<RunningTask> tasks = r.array(v, p, "tasks", (t, tp) -> r.object(t, tp) == null ? null
                : new RunningTask(
                        r.requiredString(t, tp, "name"),
                        r.requiredString(t, tp, "node"),
                        r.array(t, tp, "gpus", (g, gp) -> r.intElement(g, gp, 0, 63)),
                        r.longIn(t, tp, "cpuMillis", 0, 0, Long.MAX_VALUE),
                        r.longIn(t, tp, "memoryMiB", 0, 0, Long.MAX_VALUE),
                        gpuMilli(r, t, tp),
                        r.string(t, tp, "migProfile", null),
                        r.array(t, tp, "migDevices", (m, mp) -> r.stringElement(m, mp))));
        return new RunningJob(
                r.requiredString(v, p, "name"),
                r.requiredString(v, p, "queue"),
                r.intIn(v, p, "priority", 0, Integer.MIN_VALUE, Integer.MAX_VALUE),
                r.bool(v, p, "preemptible", true),
                r.bool(v, p, "checkpointable", false),
                r.bool(v, p, "migratable", false),
                r.longIn(v, p, "startedAtSeconds", 0, Long.MIN_VALUE, Long.MAX_VALUE),
                tasks,
                r.stringMap(v, p, "nodeSelector"),
                r.array(v, p, "tolerations", (t, tp) -> r.object(t, tp) == null ? null
                        : new Toleration(r.requiredString(t, tp, "key"), r.string(t, tp, "value", null))));
    }

    private static Integer gpuMilli(JsonReader r, JsonNode v, String p) {
        Long m = r.optionalLong(v, p, "gpuMilli", 1, 999);
        return m == null ? null : m.intValue();
    }

    private static PendingJob pendingJob(JsonReader r, JsonNode v, String p) {
        if (r.object(v, p) == null) {
            return null;
        }
        List<TaskGroup> groups = r.array(v, p, "taskGroups", (g, gp) -> r.object(g, gp) == null ? null
                : new TaskGroup(
                        r.requiredString(g, gp, "name"),
                        r.intIn(g, gp, "replicas", 1, 1, 10_000),
                        r.intIn(g, gp, "gpusPerReplica", 0, 0, 64),
                        r.longIn(g, gp, "cpuMillis", 0, 0, Long.MAX_VALUE),
                        r.longIn(g, gp, "memoryMiB", 0, 0, Long.MAX_VALUE),
                        gpuMilli(r, g, gp),
                        r.string(g, gp, "migProfile", null)));
        int total = groups.stream().mapToInt(TaskGroup::replicas).sum();
        GpuTopology topo = GpuTopology.ANY;
        String topoText = r.string(v, p, "gpuTopology", null);
        if (topoText != null) {
            try {
                topo = GpuTopology.parse(topoText);
            } catch (IllegalArgumentException e) {
                r.bad(JsonReader.at(p, "gpuTopology"), e.getMessage());
            }
        }
        Network network = Network.ANY;
        if (!JsonReader.absent(v, "network")) {
            String np = JsonReader.at(p, "network");
            JsonNode n = r.object(v.get("network"), np);
            if (n != null) {
                network = new Network(level(r, n, np, "required"), level(r, n, np, "preferred"));
            }
        }
        List<Toleration> tolerations = r.array(v, p, "tolerations", (t, tp) -> r.object(t, tp) == null ? null
                : new Toleration(r.requiredString(t, tp, "key"), r.string(t, tp, "value", null)));
        return new PendingJob(
                r.requiredString(v, p, "name"),
                r.requiredString(v, p, "queue"),
                r.intIn(v, p, "priority", 0, Integer.MIN_VALUE, Integer.MAX_VALUE),
                r.longIn(v, p, "submittedAtSeconds", 0, Long.MIN_VALUE, Long.MAX_VALUE),
                groups,
                r.intIn(v, p, "minAvailable", total, 1, 10_000),
                r.array(v, p, "gpuModels", (m, mp) -> r.stringElement(m, mp)),
                topo,
                network,
                r.bool(v, p, "requireInfiniBand", false),
                r.stringMap(v, p, "nodeSelector"),
                tolerations,
                r.bool(v, p, "preemptible", true),
                r.bool(v, p, "checkpointable", false),
                r.optionalLong(v, p, "estimatedRuntimeSeconds", 0, Long.MAX_VALUE));
    }

    private static NetworkLevel level(JsonReader r, JsonNode n, String p, String field) {
        String s = r.string(n, p, field, null);
        if (s == null) {
            return null;
        }
        try {
            return NetworkLevel.parse(s);
        } catch (IllegalArgumentException e) {
            r.bad(JsonReader.at(p, field), e.getMessage());
            return null;
        }
    }

    // ---- writing (benchmark generator, tests) ----

    public static String write(Scenario s) {
        ObjectNode root = MAPPER.createObjectNode();
        root.put("format", Scenario.FORMAT);
        root.put("name", s.name());
        if (s.nowSeconds() != 0) {
            root.put("nowSeconds", s.nowSeconds());
        }
        ArrayNode nodes = root.putArray("nodes");
        for (Node n : s.nodes()) {
            ObjectNode o = nodes.addObject();
            o.put("name", n.name());
            o.put("gpuModel", n.gpuModel());
            o.put("gpus", n.gpus());
            o.set("nvlinkIslands", MAPPER.valueToTree(n.nvlinkIslands()));
            o.set("numaNodes", MAPPER.valueToTree(n.numaNodes()));
            putCapacity(o, "cpuMillis", n.cpuMillis());
            putCapacity(o, "memoryMiB", n.memoryMiB());
            ObjectNode t = o.putObject("topology");
            putIfNotNull(t, "zone", n.topology().zone());
            putIfNotNull(t, "spine", n.topology().spine());
            putIfNotNull(t, "leaf", n.topology().leaf());
            o.put("ibFabric", n.ibFabric());
            o.set("labels", MAPPER.valueToTree(n.labels()));
            ArrayNode taints = o.putArray("taints");
            for (Taint x : n.taints()) {
                ObjectNode tn = taints.addObject();
                tn.put("key", x.key());
                putIfNotNull(tn, "value", x.value());
                tn.put("effect", x.effect());
            }
            o.put("schedulable", n.schedulable());
            if (n.gpuSharing()) {
                o.put("gpuSharing", true);
            }
            if (!n.migDevices().isEmpty()) {
                ArrayNode migs = o.putArray("migDevices");
                for (MigDevice d : n.migDevices()) {
                    migs.addObject().put("id", d.id()).put("gpu", d.gpu()).put("profile", d.profile());
                }
            }
        }
        ArrayNode queues = root.putArray("queues");
        for (Queue q : s.queues()) {
            ObjectNode o = queues.addObject();
            o.put("name", q.name());
            o.put("weight", q.weight());
            o.put("guaranteeGpus", q.guaranteeGpus());
            if (q.capabilityGpus() != null) {
                o.put("capabilityGpus", q.capabilityGpus());
            }
            o.put("reclaimable", q.reclaimable());
            putIfNotNull(o, "parent", q.parent());
        }
        ArrayNode running = root.putArray("running");
        for (RunningJob j : s.running()) {
            ObjectNode o = running.addObject();
            o.put("name", j.name());
            o.put("queue", j.queue());
            o.put("priority", j.priority());
            o.put("preemptible", j.preemptible());
            o.put("checkpointable", j.checkpointable());
            o.put("migratable", j.migratable());
            o.put("startedAtSeconds", j.startedAtSeconds());
            if (!j.nodeSelector().isEmpty()) {
                o.set("nodeSelector", MAPPER.valueToTree(j.nodeSelector()));
            }
            if (!j.tolerations().isEmpty()) {
                ArrayNode tol = o.putArray("tolerations");
                for (Toleration t : j.tolerations()) {
                    ObjectNode tn = tol.addObject();
                    tn.put("key", t.key());
                    putIfNotNull(tn, "value", t.value());
                }
            }
            ArrayNode tasks = o.putArray("tasks");
            for (RunningTask t : j.tasks()) {
                ObjectNode tn = tasks.addObject();
                tn.put("name", t.name());
                tn.put("node", t.node());
                tn.set("gpus", MAPPER.valueToTree(t.gpus()));
                tn.put("cpuMillis", t.cpuMillis());
                tn.put("memoryMiB", t.memoryMiB());
                if (t.gpuMilli() != null) {
                    tn.put("gpuMilli", t.gpuMilli());
                }
                if (t.migProfile() != null) {
                    tn.put("migProfile", t.migProfile());
                }
                if (!t.migDevices().isEmpty()) {
                    tn.set("migDevices", MAPPER.valueToTree(t.migDevices()));
                }
            }
        }
        ArrayNode pending = root.putArray("pending");
        for (PendingJob j : s.pending()) {
            ObjectNode o = pending.addObject();
            o.put("name", j.name());
            o.put("queue", j.queue());
            o.put("priority", j.priority());
            o.put("submittedAtSeconds", j.submittedAtSeconds());
            ArrayNode groups = o.putArray("taskGroups");
            for (TaskGroup g : j.taskGroups()) {
                ObjectNode gn = groups.addObject();
                gn.put("name", g.name());
                gn.put("replicas", g.replicas());
                gn.put("gpusPerReplica", g.gpusPerReplica());
                gn.put("cpuMillis", g.cpuMillis());
                gn.put("memoryMiB", g.memoryMiB());
                if (g.gpuMilli() != null) {
                    gn.put("gpuMilli", g.gpuMilli());
                }
                if (g.migProfile() != null) {
                    gn.put("migProfile", g.migProfile());
                }
            }
            o.put("minAvailable", j.minAvailable());
            if (!j.gpuModels().isEmpty()) {
                o.set("gpuModels", MAPPER.valueToTree(j.gpuModels()));
            }
            o.put("gpuTopology", j.gpuTopology().jsonName());
            ObjectNode net = o.putObject("network");
            net.put("required", j.network().required().jsonName());
            if (j.network().preferred() != null) {
                net.put("preferred", j.network().preferred().jsonName());
            }
            o.put("requireInfiniBand", j.requireInfiniBand());
            o.set("nodeSelector", MAPPER.valueToTree(j.nodeSelector()));
            ArrayNode tol = o.putArray("tolerations");
            for (Toleration t : j.tolerations()) {
                ObjectNode tn = tol.addObject();
                tn.put("key", t.key());
                putIfNotNull(tn, "value", t.value());
            }
            o.put("preemptible", j.preemptible());
            o.put("checkpointable", j.checkpointable());
            if (j.estimatedRuntimeSeconds() != null) {
                o.put("estimatedRuntimeSeconds", j.estimatedRuntimeSeconds());
            }
        }
        try {
            return MAPPER.writer().without(SerializationFeature.INDENT_OUTPUT).writeValueAsString(root);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    private static void putCapacity(ObjectNode o, String field, long v) {
        if (v != Long.MAX_VALUE) {
            o.put(field, v);
        }
    }

    private static void putIfNotNull(ObjectNode o, String field, String v) {
        if (v != null) {
            o.put(field, v);
        }
    }

}
