package dev.gantry.agent;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/** The agent's calls to the inventory (register, heartbeat) and to placement (assignments, reports), with its token. */
public final class GantryClient {

    /** A call answered with a status the agent cannot take as success. */
    public static final class CallFailed extends IOException {
        public final int status;

        CallFailed(int status, String message) {
            super(message);
            this.status = status;
        }
    }

    static final ObjectMapper JSON = AgentJson.MAPPER;

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private final URI inventory;
    private final URI placement;
    private final Supplier<String> token;

    public GantryClient(URI inventory, URI placement, Supplier<String> token) {
        this.inventory = inventory;
        this.placement = placement;
        this.token = token;
    }

    /** Registers (or updates) the node: {@code PUT /v1/nodes/{name}}; also counts as a heartbeat. */
    public void register(String node, Map<String, Object> spec) throws IOException, InterruptedException {
        send(HttpRequest.newBuilder(inventory.resolve("/v1/nodes/" + enc(node))).timeout(Duration.ofSeconds(15))
                .header("Content-Type", "application/json")
                .PUT(HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(spec))));
    }

    /** {@code POST /v1/nodes/{name}/heartbeat}; a 404 (the node is unknown) is thrown as {@link CallFailed}. */
    public void heartbeat(String node) throws IOException, InterruptedException {
        send(HttpRequest.newBuilder(inventory.resolve("/v1/nodes/" + enc(node) + "/heartbeat")).timeout(Duration.ofSeconds(15))
                .POST(HttpRequest.BodyPublishers.noBody()));
    }

    /** The node's assignments and their version; held by placement up to {@code wait} while they equal {@code known}. */
    public record Assignments(String version, List<Assignment> assignments) {
    }

    public Assignments assignments(String node, Duration wait, String known) throws IOException, InterruptedException {
        String query = "node=" + enc(node) + "&wait=" + wait.toSeconds() + "s" + (known == null ? "" : "&known=" + enc(known));
        JsonNode body = send(HttpRequest.newBuilder(placement.resolve("/v1/agent/assignments?" + query))
                .timeout(wait.plusSeconds(15)).GET());
        List<Assignment> list = new ArrayList<>();
        for (JsonNode a : body.path("assignments")) {
            list.add(JSON.treeToValue(a, Assignment.class));
        }
        return new Assignments(body.path("version").asText(null), list);
    }

    /** {@code POST /v1/agent/reports}: what became of a task. */
    public JsonNode report(Assignment.Key task, String state, Integer exitCode, String logTail) throws IOException, InterruptedException {
        Map<String, Object> report = new LinkedHashMap<>();
        report.put("jobId", task.jobId());
        report.put("attempt", task.attempt());
        report.put("task", task.task());
        report.put("state", state);
        if (exitCode != null) {
            report.put("exitCode", exitCode);
        }
        if (logTail != null) {
            report.put("logTail", logTail);
        }
        return send(HttpRequest.newBuilder(placement.resolve("/v1/agent/reports")).timeout(Duration.ofSeconds(15))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(report))));
    }

    /** {@code POST /v1/agent/logs}: bytes {@code [offset, offset + length)} of a task's log; the answer's {@code next} is where to go on. */
    public long shipLog(Assignment.Key task, long offset, byte[] data, int length) throws IOException, InterruptedException {
        Map<String, Object> chunk = new LinkedHashMap<>();
        chunk.put("jobId", task.jobId());
        chunk.put("attempt", task.attempt());
        chunk.put("task", task.task());
        chunk.put("offset", offset);
        chunk.put("data", java.util.Base64.getEncoder().encodeToString(java.util.Arrays.copyOf(data, length)));
        JsonNode answer = send(HttpRequest.newBuilder(placement.resolve("/v1/agent/logs")).timeout(Duration.ofSeconds(15))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(chunk))));
        return answer.path("next").asLong(offset + length);
    }

    private JsonNode send(HttpRequest.Builder request) throws IOException, InterruptedException {
        HttpResponse<String> response = http.send(request.header("Authorization", "Bearer " + token.get())
                .header("Accept", "application/json").build(), HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
        if (response.statusCode() / 100 != 2) {
            throw new CallFailed(response.statusCode(), response.request().method() + " " + response.uri().getPath() + ": "
                    + response.statusCode() + " " + response.body());
        }
        return response.body() == null || response.body().isBlank() ? JSON.nullNode() : JSON.readTree(response.body());
    }

    private static String enc(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8);
    }
}
