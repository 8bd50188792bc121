package dev.gantry.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.ServiceAccount;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.rbac.ClusterRole;
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBinding;
import io.fabric8.kubernetes.api.model.rbac.PolicyRule;
import io.fabric8.kubernetes.api.model.rbac.Role;
import io.fabric8.kubernetes.api.model.rbac.RoleBinding;
import io.fabric8.kubernetes.api.model.rbac.RoleRef;
import io.fabric8.kubernetes.api.model.rbac.Subject;
import java.io.IOException;
import java.io.Reader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Least privilege: what each ServiceAccount may do, summed over every Role and ClusterRole bound
 * to it, is exactly what its service's code uses. The services declare their rules with the
 * Quarkus Kubernetes extension ({@code quarkus.kubernetes.rbac.*} in application.properties);
 * should a service's declaration disappear, the least-privilege rules below stand in, so the
 * test still fails on any extra right.
 */
class RbacTest {

    /** "group/resource verb", the unit of a permission ("group/resource verb name" when a rule names its objects); "" is the core group. */
    private static final Set<String> INVENTORY_FALLBACK = union(
            permissions("", List.of("nodes"), List.of("get", "list", "watch")),
            permissions("resource.k8s.io", List.of("resourceslices"), List.of("list", "watch")));

    private static final Set<String> PLACEMENT_FALLBACK = union(
            permissions("", List.of("pods"), List.of("get", "list", "watch", "create", "delete")),
            permissions("", List.of("bindings"), List.of("create")),
            permissions("", List.of("pods/eviction"), List.of("create")),
            permissions("coordination.k8s.io", List.of("leases"), List.of("create")),
            permissions("coordination.k8s.io", List.of("leases"), List.of("get", "patch"), List.of("placement-service-leader")),
            permissions("", List.of("events"), List.of("create")),
            permissions("resource.k8s.io", List.of("resourceclaims"), List.of("get", "create", "update", "delete", "list", "watch")),
            permissions("resource.k8s.io", List.of("resourceclaims/status"), List.of("update")),
            permissions("resource.k8s.io", List.of("resourceslices"), List.of("list", "watch")),
            permissions("resource.k8s.io", List.of("deviceclasses"), List.of("get")));

    private static final Pattern RULE_KEY = Pattern.compile(
            "quarkus\\.kubernetes\\.rbac\\.(?:roles|cluster-roles)\\.([^.]+)\\.policy-rules\\.(\\d+)\\.(api-groups|resources|resource-names|verbs)");

    @ParameterizedTest
    @ValueSource(strings = {"base", "overlays/dev", "overlays/prod"})
    void each_service_account_holds_exactly_what_its_service_uses(String dir) {
        Map<String, Set<String>> granted = granted(dir);
        Map<String, Set<String>> expected = new TreeMap<>();
        expected.put("node-inventory-service", declaredOr("node-inventory-service", INVENTORY_FALLBACK));
        expected.put("placement-service", declaredOr("placement-service/app", PLACEMENT_FALLBACK));
        assertThat(granted).isEqualTo(expected);
    }

    @ParameterizedTest
    @ValueSource(strings = {"base", "overlays/dev", "overlays/prod"})
    void placement_reads_and_renews_only_its_own_lease(String dir) {
        Set<String> placement = granted(dir).get("placement-service");
        assertThat(placement).contains("coordination.k8s.io/leases get placement-service-leader",
                "coordination.k8s.io/leases patch placement-service-leader", "coordination.k8s.io/leases create");
        assertThat(placement).doesNotContain("coordination.k8s.io/leases get", "coordination.k8s.io/leases patch");
    }

    /** DRA: placement writes claims (and their allocation) only in its own namespace; cluster-wide it only reads devices and claims. */
    @ParameterizedTest
    @ValueSource(strings = {"base", "overlays/dev", "overlays/prod"})
    void placement_writes_resource_claims_only_in_its_namespace(String dir) {
        Set<String> clusterWide = new TreeSet<>();
        Manifests.all(dir, ClusterRoleBinding.class).stream()
                .filter(b -> b.getSubjects().stream().anyMatch(s -> "placement-service".equals(s.getName())))
                .forEach(b -> Manifests.all(dir, ClusterRole.class).stream().filter(r -> r.getMetadata().getName().equals(b.getRoleRef().getName()))
                        .forEach(r -> r.getRules().forEach(rule -> clusterWide.addAll(rule.getVerbs()))));
        assertThat(clusterWide).containsExactlyInAnyOrder("get", "list", "watch");
        assertThat(granted(dir).get("placement-service")).contains("resource.k8s.io/resourceclaims/status update",
                "resource.k8s.io/resourceslices list", "resource.k8s.io/deviceclasses get");
    }

    @ParameterizedTest
    @ValueSource(strings = {"base", "overlays/dev", "overlays/prod"})
    void services_without_cluster_access_carry_no_token(String dir) {
        for (String service : List.of("admission-service", "quota-service")) {
            assertThat(Manifests.named(dir, ServiceAccount.class, service).getAutomountServiceAccountToken()).isFalse();
            var pod = Manifests.named(dir, Deployment.class, service).getSpec().getTemplate().getSpec();
            assertThat(pod.getServiceAccountName()).isEqualTo(service);
            assertThat(pod.getAutomountServiceAccountToken()).isFalse();
        }
    }

    /** ServiceAccount -> every permission its bindings give it, in any namespace. */
    static Map<String, Set<String>> granted(String dir) {
        Map<String, List<PolicyRule>> roles = new HashMap<>();
        Manifests.all(dir, Role.class).forEach(r -> roles.put("Role/" + r.getMetadata().getName(), r.getRules()));
        Manifests.all(dir, ClusterRole.class).forEach(r -> roles.put("ClusterRole/" + r.getMetadata().getName(), r.getRules()));
        Map<String, Set<String>> granted = new TreeMap<>();
        Manifests.all(dir, RoleBinding.class).forEach(b -> grant(granted, roles, b.getRoleRef(), b.getSubjects()));
        Manifests.all(dir, ClusterRoleBinding.class).forEach(b -> grant(granted, roles, b.getRoleRef(), b.getSubjects()));
        return granted;
    }

    private static void grant(Map<String, Set<String>> granted, Map<String, List<PolicyRule>> roles, RoleRef ref,
            List<Subject> subjects) {
        List<PolicyRule> rules = roles.get(ref.getKind() + "/" + ref.getName());
        assertThat(rules).as("bound role " + ref.getKind() + " " + ref.getName() + " exists").isNotNull();
        for (Subject subject : subjects) {
            assertThat(subject.getKind()).as("only ServiceAccounts are bound").isEqualTo("ServiceAccount");
            Set<String> permissions = granted.computeIfAbsent(subject.getName(), s -> new TreeSet<>());
            for (PolicyRule rule : rules) {
                List<String> names = rule.getResourceNames() == null || rule.getResourceNames().isEmpty() ? List.of() : rule.getResourceNames();
                for (String group : rule.getApiGroups()) {
                    permissions.addAll(permissions(group, rule.getResources(), rule.getVerbs(), names));
                }
            }
        }
    }

    /** The rules a service declares in its application.properties, or the fallback when it declares none. */
    static Set<String> declaredOr(String module, Set<String> fallback) {
        Properties properties = new Properties();
        Path file = Kustomize.root().resolve(module).resolve("src/main/resources/application.properties");
        try (Reader reader = Files.newBufferedReader(file)) {
            properties.load(reader);
        } catch (IOException e) {
            throw new IllegalStateException("cannot read " + file, e);
        }
        Map<String, Map<String, String>> rules = new TreeMap<>();
        for (String key : properties.stringPropertyNames()) {
            Matcher m = RULE_KEY.matcher(key);
            if (m.matches()) {
                rules.computeIfAbsent(m.group(1) + "#" + m.group(2), k -> new HashMap<>()).put(m.group(3), properties.getProperty(key));
            }
        }
        if (rules.isEmpty()) {
            return fallback;
        }
        Set<String> declared = new TreeSet<>();
        for (Map<String, String> rule : rules.values()) {
            for (String group : split(rule.getOrDefault("api-groups", ""))) {
                List<String> names = rule.get("resource-names") == null ? List.of() : split(rule.get("resource-names"));
                declared.addAll(permissions(group, split(rule.get("resources")), split(rule.get("verbs")), names));
            }
        }
        return declared;
    }

    private static List<String> split(String list) {
        if (list == null || list.isBlank()) {
            return List.of("");
        }
        return List.of(list.split("\\s*,\\s*"));
    }

    static Set<String> permissions(String group, List<String> resources, List<String> verbs) {
        return permissions(group, resources, verbs, List.of());
    }

    /** With {@code names}, only on the objects of those names; without, on every object of the resource. */
    static Set<String> permissions(String group, List<String> resources, List<String> verbs, List<String> names) {
        Set<String> permissions = new TreeSet<>();
        for (String resource : resources) {
            for (String verb : verbs) {
                if (names.isEmpty()) {
                    permissions.add(group + "/" + resource + " " + verb);
                } else {
                    names.forEach(name -> permissions.add(group + "/" + resource + " " + verb + " " + name));
                }
            }
        }
        return permissions;
    }

    @SafeVarargs
    private static Set<String> union(Set<String>... sets) {
        Set<String> all = new TreeSet<>();
        for (Set<String> set : sets) {
            all.addAll(set);
        }
        return all;
    }
}
