package dev.gantry.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Probe;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceAccount;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.fabric8.kubernetes.api.model.rbac.ClusterRole;
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBinding;
import io.fabric8.openshift.api.model.monitoring.v1.PrometheusRule;
import io.fabric8.openshift.api.model.monitoring.v1.ServiceMonitor;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** What base, both overlays and monitoring render: every object strictly parsed, then checked as a cluster would use it. */
class RenderedManifestsTest {

    /** The Secrets production creates out of band (docs/operations.md, "Credentials"). */
    static final Set<String> OUT_OF_BAND_SECRETS = Set.of("gantry-db-admission", "gantry-db-quota", "gantry-db-inventory",
            "gantry-db-placement", "gantry-nats-admission", "gantry-nats-quota", "gantry-nats-inventory", "gantry-nats-placement",
            "gantry-jwt-signing");

    private static final Set<Class<?>> CLUSTER_SCOPED = Set.of(Namespace.class, ClusterRole.class, ClusterRoleBinding.class);

    @ParameterizedTest
    @ValueSource(strings = {"base", "overlays/dev", "overlays/prod", "monitoring"})
    void every_object_parses_and_lives_in_the_gantry_namespace(String dir) {
        List<HasMetadata> objects = Manifests.of(dir);
        assertThat(objects).isNotEmpty();
        for (HasMetadata object : objects) {
            String namespace = object.getMetadata().getNamespace();
            if (CLUSTER_SCOPED.contains(object.getClass())) {
                assertThat(namespace).as(object.getKind() + " " + object.getMetadata().getName()).isNull();
            } else {
                assertThat(namespace).as(object.getKind() + " " + object.getMetadata().getName()).isEqualTo("gantry");
            }
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"base", "overlays/dev", "overlays/prod"})
    void four_services_probed_on_quarkus_health_running_native_images(String dir) {
        assertThat(Manifests.all(dir, Deployment.class)).extracting(d -> d.getMetadata().getName())
                .containsExactlyInAnyOrderElementsOf(Manifests.SERVICES);
        for (Deployment deployment : Manifests.all(dir, Deployment.class)) {
            String name = deployment.getMetadata().getName();
            Container container = onlyContainer(deployment.getSpec().getTemplate().getSpec());
            assertThat(container.getName()).isEqualTo(name);
            assertHttpProbe(container.getLivenessProbe(), "/q/health/live");
            assertHttpProbe(container.getReadinessProbe(), "/q/health/ready");
            assertHttpProbe(container.getStartupProbe(), "/q/health/started");
            // the image convention: <registry>/gantry/<service>:<version>-native
            assertThat(container.getImage()).as(name).matches("ghcr\\.io/gantry/" + name + ":\\d+\\.\\d+\\.\\d+-native");
            assertThat(deployment.getSpec().getTemplate().getSpec().getSecurityContext().getRunAsNonRoot()).isTrue();
            assertThat(container.getSecurityContext().getAllowPrivilegeEscalation()).isFalse();
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"base", "overlays/dev", "overlays/prod"})
    void every_service_has_a_disruption_budget_selecting_its_pods(String dir) {
        for (Deployment deployment : Manifests.all(dir, Deployment.class)) {
            Map<String, String> podLabels = deployment.getSpec().getTemplate().getMetadata().getLabels();
            List<PodDisruptionBudget> budgets = Manifests.all(dir, PodDisruptionBudget.class).stream()
                    .filter(b -> podLabels.entrySet().containsAll(b.getSpec().getSelector().getMatchLabels().entrySet()))
                    .toList();
            assertThat(budgets).as(deployment.getMetadata().getName()).hasSize(1);
            assertThat(budgets.getFirst().getSpec().getMaxUnavailable().getIntVal()).isEqualTo(1);
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"base", "overlays/dev", "overlays/prod"})
    void ingress_is_denied_unless_a_policy_opens_it(String dir) {
        NetworkPolicy deny = Manifests.named(dir, NetworkPolicy.class, "default-deny-ingress");
        assertThat(deny.getSpec().getPodSelector().getMatchLabels()).isNullOrEmpty();
        assertThat(deny.getSpec().getPolicyTypes()).containsExactly("Ingress");
        assertThat(deny.getSpec().getIngress()).isNullOrEmpty();
        // the only policy open to every source is admission's API port
        List<NetworkPolicy> openToAll = Manifests.all(dir, NetworkPolicy.class).stream()
                .filter(p -> p.getSpec().getIngress().stream().anyMatch(rule -> rule.getFrom().isEmpty()))
                .toList();
        assertThat(openToAll).extracting(p -> p.getMetadata().getName()).containsExactly("admission-service-api");
        assertThat(openToAll.getFirst().getSpec().getIngress().getFirst().getPorts().getFirst().getPort().getIntVal())
                .isEqualTo(8080);
    }

    @ParameterizedTest
    @ValueSource(strings = {"overlays/dev", "overlays/prod"})
    void pods_refer_only_to_objects_the_overlay_creates(String dir) {
        Set<String> accounts = names(dir, ServiceAccount.class);
        Set<String> configMaps = names(dir, ConfigMap.class);
        Set<String> secrets = names(dir, Secret.class);
        if (dir.endsWith("prod")) {
            // production credentials never come from the repository: created out of band (docs/operations.md)
            assertThat(secrets).isEmpty();
            secrets = OUT_OF_BAND_SECRETS;
        }
        for (Deployment deployment : Manifests.all(dir, Deployment.class)) {
            PodSpec pod = deployment.getSpec().getTemplate().getSpec();
            assertThat(accounts).as("ServiceAccount of " + deployment.getMetadata().getName())
                    .contains(pod.getServiceAccountName());
            Container container = onlyContainer(pod);
            for (var source : container.getEnvFrom()) {
                if (source.getSecretRef() != null) {
                    assertThat(secrets).contains(source.getSecretRef().getName());
                }
                if (source.getConfigMapRef() != null) {
                    assertThat(configMaps).contains(source.getConfigMapRef().getName());
                }
            }
            for (EnvVar env : container.getEnv()) {
                assertThat(env.getValue() == null || env.getValueFrom() == null).as(env.getName()).isTrue();
                if (env.getValueFrom() != null && env.getValueFrom().getConfigMapKeyRef() != null) {
                    var ref = env.getValueFrom().getConfigMapKeyRef();
                    assertThat(Manifests.named(dir, ConfigMap.class, ref.getName()).getData()).containsKey(ref.getKey());
                }
                if (env.getValueFrom() != null && env.getValueFrom().getSecretKeyRef() != null) {
                    var ref = env.getValueFrom().getSecretKeyRef();
                    assertThat(secrets).as(env.getName()).contains(ref.getName());
                    if (!dir.endsWith("prod")) {
                        assertThat(Manifests.named(dir, Secret.class, ref.getName()).getData()).as(env.getName()).containsKey(ref.getKey());
                    }
                }
            }
        }
    }

    @Test
    void dev_runs_one_of_everything_with_postgresql_and_nats_in_the_namespace() {
        String dir = "overlays/dev";
        assertThat(Manifests.all(dir, Deployment.class)).allSatisfy(d -> assertThat(d.getSpec().getReplicas()).isEqualTo(1));
        assertThat(Manifests.all(dir, StatefulSet.class)).extracting(s -> s.getMetadata().getName())
                .containsExactlyInAnyOrder("postgresql", "nats");
        assertThat(Manifests.all(dir, StatefulSet.class)).allSatisfy(s -> assertThat(s.getSpec().getReplicas()).isEqualTo(1));
        // the services' defaults (GANTRY_DB_HOST=postgresql, GANTRY_NATS_URL=nats://nats:4222) reach them
        for (Deployment deployment : Manifests.all(dir, Deployment.class)) {
            Map<String, String> env = plainEnv(onlyContainer(deployment.getSpec().getTemplate().getSpec()));
            assertThat(env).containsEntry("GANTRY_DB_HOST", "postgresql").containsEntry("GANTRY_NATS_URL", "nats://nats:4222");
        }
        assertThat(servicePort(dir, "postgresql")).isEqualTo(5432);
        assertThat(servicePort(dir, "nats")).isEqualTo(4222);
        // JetStream on, in the server's configuration file (CredentialsTest checks its users)
        assertThat(Manifests.named(dir, ConfigMap.class, "nats-config").getData().get("nats.conf")).contains("jetstream {");
        String init = Manifests.named(dir, ConfigMap.class, "postgresql-init").getData().get("init-databases.sql");
        for (String db : List.of("gantry_admission", "gantry_quota", "gantry_inventory", "gantry_placement")) {
            assertThat(init).contains("CREATE DATABASE " + db + " OWNER ");
        }
        assertThat(Manifests.named(dir, ConfigMap.class, "placement-config").getData())
                .containsEntry("GANTRY_PLACEMENT_LEADER_ELECTION_ENABLED", "false");
    }

    @Test
    void prod_sizes_every_container_and_reaches_external_postgresql_and_nats() {
        String dir = "overlays/prod";
        assertThat(names(dir, StatefulSet.class)).isEmpty();
        assertThat(names(dir, Service.class)).doesNotContain("postgresql", "nats");
        for (Deployment deployment : Manifests.all(dir, Deployment.class)) {
            Container container = onlyContainer(deployment.getSpec().getTemplate().getSpec());
            String name = deployment.getMetadata().getName();
            assertThat(container.getResources().getRequests()).as(name).containsKeys("cpu", "memory");
            assertThat(container.getResources().getLimits()).as(name).containsKeys("cpu", "memory");
            assertThat(container.getImagePullPolicy()).isEqualTo("IfNotPresent");
            for (String variable : List.of("GANTRY_DB_HOST", "GANTRY_DB_PORT", "GANTRY_NATS_URL")) {
                EnvVar env = container.getEnv().stream().filter(e -> e.getName().equals(variable)).findFirst().orElseThrow();
                assertThat(env.getValueFrom().getConfigMapKeyRef().getName()).as(name + " " + variable).isEqualTo("gantry-endpoints");
            }
        }
        assertThat(Manifests.named(dir, Deployment.class, "admission-service").getSpec().getReplicas()).isGreaterThanOrEqualTo(2);
        assertThat(Manifests.named(dir, ConfigMap.class, "gantry-endpoints").getData().get("GANTRY_NATS_URL")).startsWith("nats://");
    }

    @Test
    void prod_runs_placement_as_elected_leader_and_standby_on_different_nodes() {
        String dir = "overlays/prod";
        Deployment placement = Manifests.named(dir, Deployment.class, "placement-service");
        assertThat(placement.getSpec().getReplicas()).isEqualTo(2);
        Map<String, String> config = Manifests.named(dir, ConfigMap.class, "placement-config").getData();
        assertThat(config).containsEntry("GANTRY_PLACEMENT_LEADER_ELECTION_ENABLED", "true")
                .containsEntry("GANTRY_PLACEMENT_BINDER", "kubernetes");
        assertThat(onlyContainer(placement.getSpec().getTemplate().getSpec()).getEnvFrom())
                .anyMatch(source -> source.getConfigMapRef() != null && source.getConfigMapRef().getName().equals("placement-config"));
        var antiAffinity = placement.getSpec().getTemplate().getSpec().getAffinity().getPodAntiAffinity()
                .getRequiredDuringSchedulingIgnoredDuringExecution();
        assertThat(antiAffinity).singleElement().satisfies(term -> {
            assertThat(term.getTopologyKey()).isEqualTo("kubernetes.io/hostname");
            assertThat(term.getLabelSelector().getMatchLabels()).containsEntry("app.kubernetes.io/name", "placement-service");
        });
    }

    @ParameterizedTest
    @ValueSource(strings = {"base", "overlays/dev", "overlays/prod"})
    void the_namespace_enforces_pod_security_baseline_and_reports_what_falls_short_of_restricted(String dir) {
        Map<String, String> labels = Manifests.named(dir, Namespace.class, "gantry").getMetadata().getLabels();
        assertThat(labels).containsEntry("pod-security.kubernetes.io/enforce", "baseline")
                .containsEntry("pod-security.kubernetes.io/warn", "restricted")
                .containsEntry("pod-security.kubernetes.io/audit", "restricted");
    }

    @Test
    void solver_profile_and_planner_are_ones_the_engine_knows() {
        for (String dir : List.of("base", "overlays/dev", "overlays/prod")) {
            Map<String, String> config = Manifests.named(dir, ConfigMap.class, "placement-config").getData();
            assertThat(config.get("GANTRY_PLACEMENT_PROFILE")).as(dir).isIn("fast", "balanced", "thorough");
            assertThat(config.get("GANTRY_PLACEMENT_PLANNER")).as(dir).isIn("timefold", "greedy", "fifo");
            assertThat(config.get("GANTRY_PLACEMENT_WINDOW")).as(dir).matches("\\d+(ms|s|m)");
        }
    }

    @Test
    void monitoring_scrapes_every_service_and_prod_includes_it_while_dev_does_not() {
        ServiceMonitor monitor = Manifests.named("monitoring", ServiceMonitor.class, "gantry");
        Map<String, String> selector = monitor.getSpec().getSelector().getMatchLabels();
        String port = monitor.getSpec().getEndpoints().getFirst().getPort();
        assertThat(monitor.getSpec().getEndpoints().getFirst().getPath()).isEqualTo("/q/metrics");
        List<Service> services = Manifests.all("base", Service.class);
        assertThat(services.stream().filter(s -> s.getMetadata().getLabels().entrySet().containsAll(selector.entrySet())))
                .extracting(s -> s.getMetadata().getName()).containsExactlyInAnyOrderElementsOf(Manifests.SERVICES);
        assertThat(services).allSatisfy(s -> assertThat(s.getSpec().getPorts()).anySatisfy(p -> assertThat(p.getName()).isEqualTo(port)));
        assertThat(names("overlays/prod", PrometheusRule.class)).containsExactly("gantry");
        assertThat(names("overlays/prod", ServiceMonitor.class)).containsExactly("gantry");
        assertThat(Manifests.of("overlays/dev")).noneMatch(o -> o instanceof ServiceMonitor || o instanceof PrometheusRule);
        assertThat(Manifests.named("monitoring", ConfigMap.class, "gantry-dashboard").getMetadata().getLabels())
                .containsEntry("grafana_dashboard", "1");
    }

    static Container onlyContainer(PodSpec pod) {
        assertThat(pod.getContainers()).hasSize(1);
        return pod.getContainers().getFirst();
    }

    private static void assertHttpProbe(Probe probe, String path) {
        assertThat(probe).as(path).isNotNull();
        assertThat(probe.getHttpGet().getPath()).isEqualTo(path);
        assertThat(probe.getHttpGet().getPort().getIntVal()).isEqualTo(8080);
    }

    private static Map<String, String> plainEnv(Container container) {
        return container.getEnv().stream().filter(e -> e.getValue() != null)
                .collect(Collectors.toMap(EnvVar::getName, EnvVar::getValue));
    }

    private static int servicePort(String dir, String name) {
        return Manifests.named(dir, Service.class, name).getSpec().getPorts().getFirst().getPort();
    }

    private static Set<String> names(String dir, Class<? extends HasMetadata> type) {
        return Manifests.all(dir, type).stream().map(o -> o.getMetadata().getName()).collect(Collectors.toSet());
    }
}
