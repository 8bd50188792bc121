package dev.gantry.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A service that calls another (admission: quota checks, the console's reads of inventory and
 * placement; inventory: placement's quarantined nodes) reads the address from
 * {@code gantry.<service>.url}, whose default is the loopback port {@code bin/gantry up} uses. In a
 * pod that default reaches nothing, so every such client must be given the in-cluster Service by its
 * environment variable ({@code GANTRY_<SERVICE>_URL}).
 */
class ServiceWiringTest {

    /** {@code quarkus.rest-client.<key>.url=${gantry.<name>.url:...}} in a service's application.properties. */
    private static final Pattern CLIENT_URL = Pattern.compile(
            "(?m)^quarkus\\.rest-client\\.[a-z-]+\\.url=\\$\\{gantry\\.([a-z]+)\\.url:[^}]*}");

    /** gantry.<name>.url -> the Service it must name. */
    private static final Map<String, String> SERVICE_OF = Map.of("quota", "quota-service", "inventory", "node-inventory-service",
            "placement", "placement-service", "admission", "admission-service");

    private static final Map<String, String> MODULE_OF = Map.of("admission-service", "admission-service", "quota-service", "quota-service",
            "node-inventory-service", "node-inventory-service", "placement-service", "placement-service/app");

    @ParameterizedTest
    @ValueSource(strings = {"base", "overlays/dev", "overlays/prod"})
    void every_client_of_another_service_is_pointed_at_its_cluster_service(String dir) {
        int clients = 0;
        for (Deployment deployment : Manifests.all(dir, Deployment.class)) {
            String name = deployment.getMetadata().getName();
            Map<String, String> env = new LinkedHashMap<>();
            for (EnvVar var : deployment.getSpec().getTemplate().getSpec().getContainers().get(0).getEnv()) {
                env.put(var.getName(), var.getValue());
            }
            Matcher m = CLIENT_URL.matcher(properties(MODULE_OF.get(name)));
            while (m.find()) {
                clients++;
                String target = SERVICE_OF.get(m.group(1));
                assertThat(target).as(name + " calls an unknown service gantry." + m.group(1) + ".url").isNotNull();
                String variable = "GANTRY_" + m.group(1).toUpperCase() + "_URL";
                assertThat(env.get(variable)).as(dir + ": " + name + " needs " + variable + " (its default is loopback)")
                        .isEqualTo("http://" + target);
                Service service = Manifests.named(dir, Service.class, target);
                assertThat(service.getSpec().getPorts()).as(target + " serves plain http on port 80")
                        .anySatisfy(p -> assertThat(p.getPort()).isEqualTo(80));
            }
        }
        assertThat(clients).as("admission calls quota, inventory and placement; inventory calls placement").isGreaterThanOrEqualTo(4);
    }

    private static String properties(String module) {
        try {
            return Files.readString(Kustomize.root().resolve(module).resolve("src/main/resources/application.properties"));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
