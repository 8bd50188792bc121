package dev.gantry.placement.engine.json;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.gantry.placement.engine.domain.Migration;
import dev.gantry.placement.engine.domain.Placement;
import dev.gantry.placement.engine.domain.Plan;
import dev.gantry.placement.engine.domain.Preemption;
import dev.gantry.placement.engine.domain.TaskPlacement;
import dev.gantry.placement.engine.domain.Unplaced;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/** Reads and writes {@code gantry-plan/v1} (FORMAT.md). Planner facts go in an extra {@code metadata} object. */
public final class PlanCodec {
    private static final ObjectMapper MAPPER = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

    private PlanCodec() {
    }

    public static String write(Plan plan) {
        try {
            return MAPPER.writeValueAsString(toTree(plan));
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    public static ObjectNode toTree(Plan plan) {
        ObjectNode root = MAPPER.createObjectNode();
        root.put("format", Plan.FORMAT);
        root.put("scenario", plan.scenario());
        ArrayNode placements = root.putArray("placements");
        for (Placement p : plan.placements()) {
            ObjectNode o = placements.addObject();
            o.put("job", p.job());
            tasks(o.putArray("tasks"), p.tasks());
        }
        ArrayNode preemptions = root.putArray("preemptions");
        for (Preemption p : plan.preemptions()) {
            preemptions.addObject().put("job", p.job()).put("reason", p.reason());
        }
        ArrayNode migrations = root.putArray("migrations");
        for (Migration m : plan.migrations()) {
            ObjectNode o = migrations.addObject();
            o.put("job", m.job());
            tasks(o.putArray("tasks"), m.tasks());
        }
        ArrayNode unplaced = root.putArray("unplaced");
        for (Unplaced u : plan.unplaced()) {
            unplaced.addObject().put("job", u.job()).put("reason", u.reason());
        }
        root.put("solveMillis", plan.solveMillis());
        if (!plan.metadata().isEmpty()) {
            ObjectNode meta = root.putObject("metadata");
            new TreeMap<>(plan.metadata()).forEach(meta::put);
        }
        return root;
    }

    private static void tasks(ArrayNode out, List<TaskPlacement> tasks) {
        for (TaskPlacement t : tasks) {
            ObjectNode o = out.addObject();
            o.put("task", t.task());
            o.put("node", t.node());
            ArrayNode gpus = o.putArray("gpus");
            t.gpus().forEach(gpus::add);
            if (t.gpuMilli() != null) {
                o.put("gpuMilli", t.gpuMilli());
            }
            if (!t.migDevices().isEmpty()) {
                ArrayNode migs = o.putArray("migDevices");
                t.migDevices().forEach(migs::add);
            }
        }
    }

    /** Lenient read, for validating plans made elsewhere; throws IllegalArgumentException on bad JSON. */
    public static Plan read(String json) {
        JsonNode root;
        try {
            root = MAPPER.readTree(json);
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException("plan is not valid JSON: " + e.getOriginalMessage(), e);
        }
        List<Placement> placements = new ArrayList<>();
        for (JsonNode p : iter(root.get("placements"))) {
            placements.add(new Placement(p.path("job").asText(), readTasks(p.get("tasks"))));
        }
        List<Preemption> preemptions = new ArrayList<>();
        for (JsonNode p : iter(root.get("preemptions"))) {
            preemptions.add(new Preemption(p.path("job").asText(), p.path("reason").asText("")));
        }
        List<Migration> migrations = new ArrayList<>();
        for (JsonNode m : iter(root.get("migrations"))) {
            migrations.add(new Migration(m.path("job").asText(), readTasks(m.get("tasks"))));
        }
        List<Unplaced> unplaced = new ArrayList<>();
        for (JsonNode u : iter(root.get("unplaced"))) {
            unplaced.add(new Unplaced(u.path("job").asText(), u.path("reason").asText("")));
        }
        Map<String, String> meta = new LinkedHashMap<>();
        JsonNode m = root.get("metadata");
        if (m != null && m.isObject()) {
            m.properties().forEach(e -> meta.put(e.getKey(), e.getValue().asText()));
        }
        return new Plan(root.path("format").asText(Plan.FORMAT), root.path("scenario").asText(""), placements, preemptions,
                migrations, unplaced, root.path("solveMillis").asLong(0), meta);
    }

    private static List<TaskPlacement> readTasks(JsonNode tasks) {
        List<TaskPlacement> out = new ArrayList<>();
        for (JsonNode t : iter(tasks)) {
            List<Integer> gpus = new ArrayList<>();
            for (JsonNode g : iter(t.get("gpus"))) {
                gpus.add(g.asInt());
            }
            JsonNode milli = t.get("gpuMilli");
            List<String> migs = new ArrayList<>();
            for (JsonNode m : iter(t.get("migDevices"))) {
                migs.add(m.asText());
            }
            out.add(new TaskPlacement(t.path("task").asText(), t.path("node").asText(), gpus,
                    milli == null || milli.isNull() ? null : milli.asInt(), migs));
        }
        return out;
    }

    private static Iterable<JsonNode> iter(JsonNode array) {
        if (array == null || !array.isArray()) {
            return List.of();
        }
        List<JsonNode> out = new ArrayList<>();
        array.forEach(out::add);
        return out;
    }
}
