package dev.gantry.inventory.placement;

import com.sun.net.httpserver.HttpServer;
import io.quarkus.test.common.QuarkusTestResourceLifecycleManager;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

/** Stands in for placement-service's {@code GET /v1/quarantined-nodes} on the port the %test profile names. */
public class PlacementStub implements QuarkusTestResourceLifecycleManager {

    static volatile int status = 200;
    static volatile String quarantined = "[]";
    /** Authorization headers placement was called with, newest last. */
    static final List<String> AUTHORIZATIONS = new CopyOnWriteArrayList<>();

    private HttpServer server;

    @Override
    public Map<String, String> start() {
        try {
            server = HttpServer.create(new InetSocketAddress("127.0.0.1", 18096), 0);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        server.createContext("/v1/quarantined-nodes", exchange -> {
            AUTHORIZATIONS.add(String.valueOf(exchange.getRequestHeaders().getFirst("Authorization")));
            byte[] body = (status == 200 ? quarantined : "{\"status\": " + status + "}").getBytes(StandardCharsets.UTF_8);
            exchange.getResponseHeaders().add("Content-Type", "application/json");
            exchange.sendResponseHeaders(status, body.length);
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(body);
            }
        });
        server.start();
        return Map.of();
    }

    @Override
    public void stop() {
        server.stop(0);
    }
}
