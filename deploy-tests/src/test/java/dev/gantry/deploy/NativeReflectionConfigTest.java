package dev.gantry.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * A native image keeps reflection only for classes it is told about. Quarkus registers its own
 * (REST bodies, entities, config), but the classes Jackson binds through plain ObjectMappers
 * (contracts' event payloads, the engine's scenario and plan, inventory's cluster file) and the
 * Timefold domain the engine builds its solver from (plain timefold-solver-core, reflective member
 * access) are listed in each service's META-INF/native-image/.../reflect-config.json, which
 * native-image reads from the classpath. This test keeps those lists equal to the source tree:
 * after adding a class, run with -Dgantry.native.update=true to rewrite them.
 */
class NativeReflectionConfigTest {

    /** service module -> source roots (module/src/main/java/package-dir) whose every type is registered. */
    private static final Map<String, List<String>> REGISTERED = Map.of(
            "admission-service", List.of("contracts/src/main/java/dev/gantry/contracts"),
            "quota-service", List.of("contracts/src/main/java/dev/gantry/contracts"),
            "node-inventory-service", List.of("contracts/src/main/java/dev/gantry/contracts",
                    "node-inventory-service/src/main/java/dev/gantry/inventory/rest",
                    "node-inventory-service/src/main/java/dev/gantry/inventory/ClusterFiles.java"),
            "placement-service/app", List.of("contracts/src/main/java/dev/gantry/contracts",
                    "placement-service/engine/src/main/java/dev/gantry/placement/engine"));

    private static final Map<String, String> ARTIFACT = Map.of("admission-service", "admission-service",
            "quota-service", "quota-service", "node-inventory-service", "node-inventory-service",
            "placement-service/app", "placement-service");

    /** A type declaration; its indentation tells how deeply it is nested (the sources indent by 4). */
    private static final Pattern TYPE = Pattern.compile(
            "^( *)(?:(?:public|protected|private|static|final|abstract|sealed|non-sealed|strictfp)\\s+)*(?:class|record|enum|interface|@interface)\\s+([A-Za-z_][A-Za-z0-9_]*)");

    @Test
    void every_service_registers_exactly_the_types_of_its_reflective_packages() {
        boolean update = Boolean.getBoolean("gantry.native.update");
        for (var entry : REGISTERED.entrySet()) {
            String expected = config(entry.getValue());
            Path file = Kustomize.root().resolve(entry.getKey()).resolve("src/main/resources/META-INF/native-image/dev.gantry")
                    .resolve(ARTIFACT.get(entry.getKey())).resolve("reflect-config.json");
            try {
                if (update) {
                    Files.createDirectories(file.getParent());
                    Files.writeString(file, expected);
                }
                assertThat(file).as("run deploy-tests with -Dgantry.native.update=true").exists();
                assertThat(Files.readString(file)).as(file + " (rewrite with -Dgantry.native.update=true)").isEqualTo(expected);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }

    @Test
    void nested_types_are_named_as_the_jvm_names_them() {
        TreeSet<String> names = new TreeSet<>();
        types("package a.b;\npublic record Outer(int x) {\n    public record Inner(int y) {\n        enum Deep { A }\n    }\n}\n"
                + "final class Second {\n}\n", names);
        assertThat(names).containsExactly("a.b.Outer", "a.b.Outer$Inner", "a.b.Outer$Inner$Deep", "a.b.Second");
    }

    private static String config(List<String> roots) {
        TreeSet<String> names = new TreeSet<>();
        for (String root : roots) {
            Path path = Kustomize.root().resolve(root);
            assertThat(path).as(root).exists();
            try (Stream<Path> files = Files.walk(path)) {
                for (Path file : files.filter(f -> f.toString().endsWith(".java") && !f.endsWith("package-info.java")).toList()) {
                    types(Files.readString(file), names);
                }
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        StringBuilder json = new StringBuilder("[\n");
        for (String name : names) {
            json.append(json.length() > 2 ? ",\n" : "").append("  {\"name\": \"").append(name)
                    .append("\", \"allDeclaredConstructors\": true, \"allDeclaredMethods\": true, \"allDeclaredFields\": true}");
        }
        return json.append("\n]\n").toString();
    }

    /** Adds the binary names of the types declared in one source file. */
    static void types(String source, TreeSet<String> names) {
        String pkg = "";
        String[] enclosing = new String[16];
        for (String line : source.split("\n")) {
            if (line.startsWith("package ")) {
                pkg = line.substring("package ".length(), line.indexOf(';')).trim();
                continue;
            }
            Matcher m = TYPE.matcher(line);
            if (m.find()) {
                int depth = m.group(1).length() / 4;
                enclosing[depth] = m.group(2);
                StringBuilder name = new StringBuilder(pkg).append('.');
                for (int i = 0; i <= depth; i++) {
                    name.append(i > 0 ? "$" : "").append(enclosing[i]);
                }
                names.add(name.toString());
            }
        }
    }
}
