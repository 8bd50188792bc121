package dev.gantry.deploy;

import io.fabric8.kubernetes.api.model.HasMetadata;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/** The parsed objects of each rendered directory, and lookups the tests share. */
final class Manifests {

    static final List<String> DIRECTORIES = List.of("base", "overlays/dev", "overlays/prod", "monitoring");
    static final List<String> SERVICES = List.of("admission-service", "quota-service", "node-inventory-service",
            "placement-service");

    private static final Map<String, List<HasMetadata>> PARSED = new ConcurrentHashMap<>();

    private Manifests() {
    }

    static List<HasMetadata> of(String dir) {
        return PARSED.computeIfAbsent(dir, d -> StrictModel.parse(Kustomize.render(d)));
    }

    static <T extends HasMetadata> List<T> all(String dir, Class<T> type) {
        return of(dir).stream().filter(type::isInstance).map(type::cast).toList();
    }

    static <T extends HasMetadata> T named(String dir, Class<T> type, String name) {
        return all(dir, type).stream().filter(o -> o.getMetadata().getName().equals(name)).findFirst()
                .orElseThrow(() -> new AssertionError(dir + " renders no " + type.getSimpleName() + " " + name));
    }
}
