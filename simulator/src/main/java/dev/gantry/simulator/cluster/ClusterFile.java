package dev.gantry.simulator.cluster;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.gantry.placement.engine.domain.Node;
import dev.gantry.placement.engine.domain.Queue;
import dev.gantry.placement.engine.domain.Scenario;
import dev.gantry.placement.engine.json.ScenarioCodec;
import dev.gantry.placement.engine.json.ScenarioValidationException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * The cluster a replay runs on: the {@code nodes} (and optional {@code queues}) of a
 * gantry-scenario/v1 file (FORMAT.md). {@code running} and {@code pending} are ignored, and
 * {@code format}/{@code name} may be left out, so a scenario file and a bare cluster file both work.
 */
public record ClusterFile(List<Node> nodes, List<Queue> queues) {
    private static final ObjectMapper JSON = new ObjectMapper();

    public static ClusterFile read(Path file) {
        JsonNode root;
        try {
            root = JSON.readTree(Files.readString(file));
        } catch (IOException e) {
            throw new IllegalArgumentException("cannot read cluster file " + file + ": " + e.getMessage().lines().findFirst().orElse(""));
        }
        if (!(root instanceof ObjectNode obj) || !obj.has("nodes")) {
            throw new IllegalArgumentException("cluster file " + file + ": a JSON object with \"nodes\" is needed");
        }
        obj.put("format", Scenario.FORMAT);
        if (!obj.has("name")) {
            obj.put("name", "cluster");
        }
        obj.remove("running");
        obj.remove("pending");
        obj.putArray("running");
        obj.putArray("pending");
        if (!obj.has("queues")) {
            obj.putArray("queues");
        }
        try {
            Scenario sc = ScenarioCodec.read(obj.toString());
            if (sc.nodes().isEmpty()) {
                throw new IllegalArgumentException("cluster file " + file + ": no nodes");
            }
            return new ClusterFile(sc.nodes(), sc.queues());
        } catch (ScenarioValidationException e) {
            throw new IllegalArgumentException("cluster file " + file + ": " + e.getMessage());
        }
    }

    public long gpuMilli() {
        return nodes.stream().mapToLong(n -> 1000L * n.gpus()).sum();
    }

    public String toJson() {
        return ScenarioCodec.write(new Scenario(Scenario.FORMAT, "cluster", 0, nodes, queues, List.of(), List.of()));
    }
}
