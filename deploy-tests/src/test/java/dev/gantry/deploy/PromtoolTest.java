package dev.gantry.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.openshift.api.model.monitoring.v1.PrometheusRule;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Prometheus's own tool on the rendered monitoring: every alert and dashboard expression parses,
 * and each alert fires (with its labels and texts) on the synthetic series of
 * deploy/k8s/monitoring/tests/alerts-test.yml, and not before. promtool is Debian's (prometheus
 * package), which bin/lib/infra.sh ensure_promtool provides.
 */
class PromtoolTest {

    /** -Dgantry.promtool, else the system's, else the one ensure_promtool extracted into .gantry/tools. */
    private static final String PROMTOOL = System.getProperty("gantry.promtool",
            Files.isExecutable(Path.of("/usr/bin/promtool")) ? "/usr/bin/promtool"
                    : Kustomize.root().resolve(".gantry/tools/promtool").toString());
    private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());

    @TempDir
    Path dir;

    @Test
    void alerts_fire_on_their_test_series_and_not_before() throws Exception {
        PrometheusRule rule = Manifests.named("monitoring", PrometheusRule.class, "gantry");
        YAML.writeValue(dir.resolve("rules.yml").toFile(), YAML.createObjectNode().set("groups",
                YAML.valueToTree(rule.getSpec().getGroups())));
        Files.copy(Kustomize.k8s("monitoring/tests/alerts-test.yml"), dir.resolve("alerts-test.yml"));
        String out = promtool("test", "rules", "alerts-test.yml");
        assertThat(out).contains("SUCCESS");
    }

    @Test
    void every_dashboard_expression_parses() throws Exception {
        ConfigMap dashboard = Manifests.named("monitoring", ConfigMap.class, "gantry-dashboard");
        JsonNode json = StrictModel.json(dashboard.getData().get("gantry-dashboard.json"));
        // each expression as a recording rule, which promtool parses; Grafana's interval variable as a plain range
        ArrayNode rules = YAML.createArrayNode();
        for (JsonNode panel : json.path("panels")) {
            for (JsonNode target : panel.path("targets")) {
                ObjectNode r = rules.addObject();
                r.put("record", "dashboard:expr_" + rules.size());
                r.put("expr", target.path("expr").asText().replace("$__rate_interval", "5m"));
            }
        }
        ObjectNode group = YAML.createObjectNode().put("name", "dashboard");
        group.set("rules", rules);
        ObjectNode file = YAML.createObjectNode();
        file.putArray("groups").add(group);
        YAML.writeValue(dir.resolve("dashboard.yml").toFile(), file);
        assertThat(promtool("check", "rules", "dashboard.yml")).contains("SUCCESS: " + rules.size() + " rules found");
    }

    private String promtool(String... args) throws IOException, InterruptedException {
        List<String> command = new java.util.ArrayList<>(List.of(PROMTOOL));
        command.addAll(List.of(args));
        Process process = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true).start();
        String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(process.exitValue()).as(out).isZero();
        return out;
    }
}
