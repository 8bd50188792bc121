package dev.gantry.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.openshift.api.model.monitoring.v1.PrometheusRule;
import io.fabric8.openshift.api.model.monitoring.v1.Rule;
import io.fabric8.openshift.api.model.monitoring.v1.RuleGroup;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** The alerts and the dashboard query only series the services (or dcgm-exporter) export, and cover what operators need. */
class AlertsAndDashboardTest {

    /** Metric names in PromQL: ours start with gantry_, dcgm-exporter's with DCGM_. */
    private static final Pattern METRIC = Pattern.compile("\\b(?:gantry|DCGM)_[A-Za-z0-9_:]+");

    @Test
    void the_nine_alerts_exist_with_a_severity_and_a_description() {
        Map<String, Rule> alerts = alerts();
        assertThat(alerts).containsOnlyKeys("GantryQueueOldestJobWaiting", "GantryGpuAllocatedButIdle",
                "GantryPlacementWindowOverrun", "GantryPlacementSolverStarved", "GantryPlacementPlanRejected",
                "GantryOutboxDeadLetter", "GantryOutboxBacklog", "GantryConsumerLag", "GantryNodeQuarantined");
        assertThat(alerts.values()).allSatisfy(rule -> {
            assertThat(rule.getLabels()).containsKey("severity");
            assertThat(rule.getAnnotations()).containsKeys("summary", "description");
            assertBalanced(rule.getExpr().getStrVal());
        });
        assertThat(alerts.get("GantryQueueOldestJobWaiting").getExpr().getStrVal())
                .contains("gantry_placement_oldest_pending_seconds").contains("> 7200");
        Rule idle = alerts.get("GantryGpuAllocatedButIdle");
        assertThat(metrics(idle.getExpr().getStrVal())).containsExactlyInAnyOrder("gantry_placement_gpu_allocated", "DCGM_FI_DEV_GPU_UTIL");
        assertThat(idle.getFor()).isEqualTo("30m");
        assertThat(metrics(alerts.get("GantryPlacementWindowOverrun").getExpr().getStrVal()))
                .contains("gantry_placement_window_overruns_total");
        assertThat(metrics(alerts.get("GantryPlacementSolverStarved").getExpr().getStrVal()))
                .containsExactlyInAnyOrder("gantry_placement_solver_fallbacks_total", "gantry_placement_window_seconds_count");
        assertThat(metrics(alerts.get("GantryPlacementPlanRejected").getExpr().getStrVal()))
                .containsExactly("gantry_placement_plans_rejected_total");
        assertThat(metrics(alerts.get("GantryOutboxDeadLetter").getExpr().getStrVal())).containsExactly("gantry_outbox_dead_letters");
        assertThat(metrics(alerts.get("GantryOutboxBacklog").getExpr().getStrVal())).containsExactly("gantry_outbox_backlog_age_seconds");
        assertThat(metrics(alerts.get("GantryConsumerLag").getExpr().getStrVal())).containsExactly("gantry_consumer_pending_messages");
        assertThat(metrics(alerts.get("GantryNodeQuarantined").getExpr().getStrVal())).containsExactly("gantry_placement_quarantined_nodes");
    }

    @Test
    void alerts_use_only_exported_metrics() {
        Set<String> used = new TreeSet<>();
        alerts().values().forEach(rule -> used.addAll(metrics(rule.getExpr().getStrVal())));
        assertThat(used).isNotEmpty();
        assertThat(ExportedMetrics.all()).containsAll(used);
    }

    @Test
    void dashboard_uses_only_exported_metrics_and_shows_what_operators_watch() {
        List<String> expressions = dashboardExpressions();
        Set<String> used = new TreeSet<>();
        expressions.forEach(e -> {
            assertBalanced(e);
            used.addAll(metrics(e));
        });
        assertThat(ExportedMetrics.all()).containsAll(used);
        // queue depth and wait, GPUs by queue and model, fragmentation, window and solve time, preemptions
        assertThat(used).contains("gantry_placement_pending_jobs", "gantry_placement_oldest_pending_seconds",
                "gantry_placement_queue_wait_seconds_bucket", "gantry_placement_gpus_allocated",
                "gantry_placement_stranded_gpus", "gantry_placement_whole_free_nodes",
                "gantry_placement_window_seconds_sum", "gantry_placement_solve_seconds_sum",
                "gantry_placement_jobs_preempted_total");
        assertThat(expressions).anyMatch(e -> e.contains("by (queue)") && e.contains("gantry_placement_gpus_allocated"));
        assertThat(expressions).anyMatch(e -> e.contains("by (model)") && e.contains("gantry_placement_gpus_allocated"));
    }

    @Test
    void the_checks_catch_an_unknown_metric() {
        assertThat(ExportedMetrics.all()).doesNotContain("gantry_placement_windows_total", "gantry_placement_window_seconds");
        assertThat(metrics("sum(rate(gantry_placement_windows_total[5m])) / ignoring(x) gantry_placement_score"))
                .containsExactlyInAnyOrder("gantry_placement_windows_total", "gantry_placement_score");
    }

    private static Map<String, Rule> alerts() {
        Map<String, Rule> alerts = new LinkedHashMap<>();
        PrometheusRule rules = Manifests.named("monitoring", PrometheusRule.class, "gantry");
        for (RuleGroup group : rules.getSpec().getGroups()) {
            for (Rule rule : group.getRules()) {
                assertThat(rule.getAlert()).as("recording rules are not expected").isNotNull();
                assertThat(alerts.put(rule.getAlert(), rule)).as("duplicate alert " + rule.getAlert()).isNull();
            }
        }
        return alerts;
    }

    private static List<String> dashboardExpressions() {
        ConfigMap dashboard = Manifests.named("monitoring", ConfigMap.class, "gantry-dashboard");
        JsonNode json = StrictModel.json(dashboard.getData().get("gantry-dashboard.json"));
        assertThat(json.path("uid").asText()).isEqualTo("gantry-overview");
        List<String> expressions = new ArrayList<>();
        for (JsonNode panel : json.path("panels")) {
            for (JsonNode target : panel.path("targets")) {
                expressions.add(target.path("expr").asText());
            }
        }
        assertThat(expressions).isNotEmpty().doesNotContain("");
        return expressions;
    }

    static Set<String> metrics(String expression) {
        Set<String> names = new TreeSet<>();
        Matcher m = METRIC.matcher(expression);
        while (m.find()) {
            names.add(m.group());
        }
        return names;
    }

    private static void assertBalanced(String expression) {
        int depth = 0;
        for (char c : expression.toCharArray()) {
            depth += c == '(' || c == '[' || c == '{' ? 1 : c == ')' || c == ']' || c == '}' ? -1 : 0;
            assertThat(depth).as(expression).isNotNegative();
        }
        assertThat(depth).as(expression).isZero();
    }
}
