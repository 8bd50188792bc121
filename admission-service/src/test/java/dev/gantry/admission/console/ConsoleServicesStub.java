package dev.gantry.admission.console;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.quarkus.test.common.QuarkusTestResourceLifecycleManager;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;

/**
 * Stands in for node-inventory-service, placement-service and quota-service in admission's own
 * tests (they run together, with the real services, in e2e-tests ConsoleIT): canned answers on the
 * ports the {@code %test} profile points the console's REST clients at. Allocations are set by
 * the test, since they must name jobs admission stored.
 */
public class ConsoleServicesStub implements QuarkusTestResourceLifecycleManager {

    /** Node pages: the console must follow {@code nextCursor}. */
    static final String NODES_PAGE_1 = """
            {"items": [
              {"name": "dgx-01", "gpuModel": "A100-SXM4-80GB", "gpus": 8, "nvlinkIslands": [[0,1,2,3,4,5,6,7]], "numaNodes": [[0,1,2,3],[4,5,6,7]],
               "cpuMillis": 224000, "memoryMiB": 1900000, "topology": {"zone": "z1", "spine": "sp1", "leaf": "lf1"},
               "schedulable": true, "health": "READY", "cordoned": false, "gpuMemoryMiB": 81920, "ibHcas": 8},
              {"name": "dgx-02", "gpuModel": "A100-SXM4-80GB", "gpus": 8, "nvlinkIslands": [[0,1,2,3,4,5,6,7]],
               "topology": {"zone": "z1", "spine": "sp1", "leaf": "lf1"}, "schedulable": false, "health": "READY", "cordoned": true}],
             "nextCursor": "page2"}
            """;
    static final String NODES_PAGE_2 = """
            {"items": [
              {"name": "pcie-01", "gpuModel": "L4", "gpus": 4, "nvlinkIslands": [[0,1]],
               "topology": {"zone": "z1", "spine": "sp2", "leaf": "lf3"}, "schedulable": true, "health": "NOT_READY", "cordoned": false}%s],
             "nextCursor": null}
            """;
    /** A node placement quarantined, as inventory shows it; the test that draws it sets {@link #extraNodes}. */
    static final String QUARANTINED_NODE = """
            ,{"name": "dgx-shrunk", "gpuModel": "H100-SXM5-80GB", "gpus": 4, "nvlinkIslands": [[0,1,2,3]],
              "topology": {"zone": "z1", "spine": "sp2", "leaf": "lf3"}, "schedulable": true, "health": "READY", "cordoned": false,
              "quarantine": {"reason": "gpus: 4 is fewer than the 7 GPUs allocated on it", "since": "2026-12-05T12:00:00Z"}}
            """;
    /** A node whose agent declared simulated GPUs (bin/gantry up on a machine without nvidia-smi). */
    static final String SIMULATED_NODE = """
            ,{"name": "laptop-sim-0", "gpuModel": "A100-SXM4-80GB", "gpus": 8, "nvlinkIslands": [[0,1,2,3,4,5,6,7]],
              "topology": {"zone": "z1", "spine": "sp2", "leaf": "lf3"}, "schedulable": true, "health": "READY", "cordoned": false,
              "source": "AGENT", "simulated": true}
            """;
    static final String QUEUES = """
            [{"name": "normal", "parent": null, "weight": 1, "state": "OPEN"}, {"name": "urgent", "parent": null, "weight": 2}]
            """;

    static volatile String allocations = "[]";
    /** placement's {@code GET /v1/start-forecasts} answer (tests of the expected start set it); none forecast by default. */
    public static final String NO_FORECASTS = "{\"computedAt\": null, \"maxJobs\": 500, \"items\": []}";
    public static volatile String startForecasts = NO_FORECASTS;
    /** placement answers 500 to everything. */
    public static volatile boolean placementDown;
    /** The query strings placement's start-forecasts were asked with, newest last. */
    public static final List<String> FORECAST_QUERIES = new java.util.concurrent.CopyOnWriteArrayList<>();
    /** What placement answers for a job's task output (the job id goes in). */
    static final String TASK_LOG = """
            {"jobId": "%s", "attempt": 1765000000000, "attempts": [1765000000000],
             "tasks": [{"task": "worker-0", "node": "dgx-01", "from": 0, "next": 17, "end": 17, "dropped": 0, "text": "rank=0 world=2\\n"}]}
            """;
    /** The task-log reads placement was asked for (path and query), oldest first. */
    static final List<String> TASK_LOG_CALLS = new java.util.concurrent.CopyOnWriteArrayList<>();
    static volatile boolean inventoryDown;
    /** Nodes appended to the last page (JSON, each starting with a comma). */
    static volatile String extraNodes = "";

    private HttpServer inventory;
    private HttpServer placement;
    private HttpServer quota;

    /** Bearer tokens the stub was called with, newest last: admission must send its service token. */
    static final List<String> AUTHORIZATIONS = new java.util.concurrent.CopyOnWriteArrayList<>();

    @Override
    public Map<String, String> start() {
        // quota on the base port, inventory on base + 1, placement on base + 2 (default 18092..18094, as the %test profile says)
        int base = Integer.getInteger("gantry.test.console-stub-port", 18092);
        inventory = serve(base + 1, exchange -> {
            if (inventoryDown) {
                return new Answer(500, "{\"status\": 500}");
            }
            String query = exchange.getRequestURI().getQuery();
            return new Answer(200, query != null && query.contains("cursor=page2") ? NODES_PAGE_2.formatted(extraNodes) : NODES_PAGE_1);
        });
        placement = serve(base + 2, exchange -> {
            if (placementDown) {
                return new Answer(500, "{\"status\": 500}");
            }
            String path = exchange.getRequestURI().getPath();
            if (path.equals("/v1/start-forecasts")) {
                FORECAST_QUERIES.add(String.valueOf(exchange.getRequestURI().getQuery()));
                return new Answer(200, startForecasts);
            }
            if (path.startsWith("/v1/task-logs/")) {
                TASK_LOG_CALLS.add(path + "?" + exchange.getRequestURI().getQuery());
                return new Answer(200, TASK_LOG.formatted(path.substring("/v1/task-logs/".length())));
            }
            return new Answer(200, allocations);
        });
        quota = serve(base, exchange -> {
            String path = exchange.getRequestURI().getPath();
            if (path.equals("/v1/queues")) {
                return new Answer(200, QUEUES);
            }
            String name = path.replaceAll("^/v1/queues/([^/]+)/status$", "$1");
            return new Answer(200, status(name));
        });
        return Map.of("gantry.quota.url", "http://127.0.0.1:" + base, "gantry.inventory.url", "http://127.0.0.1:" + (base + 1),
                "gantry.placement.url", "http://127.0.0.1:" + (base + 2));
    }

    private static String status(String queue) {
        boolean urgent = queue.equals("urgent");
        return """
                {"queue": "%s", "parent": null, "state": "OPEN", "reclaimable": true,
                 "capacity": {"gpus": 16, "reason": "cluster capacity: sum of ready nodes"},
                 "guarantee": {"gpus": %s, "reason": "guarantee reason of %s"},
                 "capability": {"gpus": %s, "reason": "capability reason"},
                 "deserved": {"gpus": %s, "reason": "deserved because of weight %s"},
                 "allocated": {"gpus": %s, "reason": "held by running jobs"},
                 "borrowed": {"gpus": %s, "reason": "borrowed reason"},
                 "pending": {"gpus": %s, "reason": "asked for by pending jobs"},
                 "allocatedGpusByModel": {},
                 "usage": {"decayedDominantShareHours": 0, "halfLifeHours": 168, "factor": 1, "weight": %s, "effectiveWeight": %s,
                           "reason": "usage reason of %s"},
                 "computedAt": "2026-12-02T12:00:00Z"}
                """.formatted(queue, urgent ? 4 : 0, queue, urgent ? 8 : 16, urgent ? 6 : 10, urgent ? 2 : 1, urgent ? 2 : 12.5,
                urgent ? 0 : 2.5, urgent ? 0 : 8, urgent ? 2 : 1, urgent ? 2 : 1, queue);
    }

    private record Answer(int status, String json) {
    }

    private interface Handler {
        Answer answer(HttpExchange exchange);
    }

    private static HttpServer serve(int port, Handler handler) {
        try {
            HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", port), 0);
            server.createContext("/", exchange -> {
                // as the real services do: 401 unless the caller is a service (gantry_role=service in the token)
                String authorization = exchange.getRequestHeaders().getFirst("Authorization");
                AUTHORIZATIONS.add(String.valueOf(authorization));
                Answer answer = isServiceToken(authorization) ? handler.answer(exchange) : new Answer(401, "{\"status\": 401}");
                byte[] body = answer.json().getBytes(StandardCharsets.UTF_8);
                exchange.getResponseHeaders().put("Content-Type", List.of("application/json"));
                exchange.sendResponseHeaders(answer.status(), body.length);
                exchange.getResponseBody().write(body);
                exchange.close();
            });
            server.start();
            return server;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A bearer JWT whose payload says gantry_role=service (its signature is the real services' business). */
    static boolean isServiceToken(String authorization) {
        if (authorization == null || !authorization.startsWith("Bearer ")) {
            return false;
        }
        String[] parts = authorization.substring("Bearer ".length()).split("\\.");
        if (parts.length != 3) {
            return false;
        }
        String payload = new String(java.util.Base64.getUrlDecoder().decode(parts[1]), StandardCharsets.UTF_8);
        return payload.replace(" ", "").contains("\"gantry_role\":\"service\"");
    }

    @Override
    public void stop() {
        for (HttpServer server : new HttpServer[] {inventory, placement, quota}) {
            if (server != null) {
                server.stop(0);
            }
        }
    }
}
