package dev.gantry.admission;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpHandler;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.function.Function;

/**
 * A stand-in for quota-service's admission check in admission's tests: a rule answers one check (its
 * JSON) with a status and a body; a batch ({@code /v1/admission-checks/batch}) is answered check by
 * check with the same rule, as quota does, unless the rule answers a check 5xx: then the whole
 * exchange gets that answer (quota down fails the request, not one check of it).
 */
final class QuotaStandIn implements HttpHandler {

    record Answer(int status, String json) {
    }

    private static final ObjectMapper JSON = new ObjectMapper();

    private final Function<String, Answer> rule;

    QuotaStandIn(Function<String, Answer> rule) {
        this.rule = rule;
    }

    @Override
    public void handle(HttpExchange exchange) throws IOException {
        String body = new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
        Answer answer = exchange.getRequestURI().getPath().endsWith("/batch") ? batch(body) : rule.apply(body);
        byte[] bytes = answer.json().getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().add("Content-Type", answer.status() == 200 ? "application/json" : "application/problem+json");
        exchange.sendResponseHeaders(answer.status(), bytes.length);
        exchange.getResponseBody().write(bytes);
        exchange.close();
    }

    private Answer batch(String body) throws IOException {
        ArrayNode results = JSON.createArrayNode();
        for (JsonNode check : JSON.readTree(body).get("checks")) {
            Answer one = rule.apply(JSON.writeValueAsString(check));
            if (one.status() >= 500) {
                return one;
            }
            ObjectNode result = results.addObject().put("status", one.status());
            if (one.status() == 200) {
                result.set("answer", JSON.readTree(one.json()));
            } else {
                result.put("detail", JSON.readTree(one.json()).path("detail").asText(one.json()));
            }
        }
        return new Answer(200, JSON.createObjectNode().set("results", results).toString());
    }
}
