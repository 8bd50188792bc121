package dev.gantry.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * A native executable reflects only on the classes its configuration names. The agent's reflection is Jackson's: it
 * builds {@link Assignment} (a record) from placement's JSON. {@link AgentJson#BOUND} lists every class the agent binds,
 * its mapper refuses any other (on the JVM too, so a test or run that binds an unlisted class fails as the native
 * executable would), and {@code META-INF/native-image/dev.gantry/gantry-node-agent/reflect-config.json} is generated
 * from that list: rewrite it with {@code -Dgantry.native.update=true}.
 */
class NativeImageConfigTest {

    private static final Path CONFIG = Path.of("src/main/resources/META-INF/native-image/dev.gantry/gantry-node-agent");

    /** A class literal handed to one of Jackson's binding calls, or named in a {@code TypeReference}. */
    private static final Pattern BINDING = Pattern.compile(
            "(?:treeToValue|readValue|convertValue|readerFor|writerFor|constructType)\\s*\\([^;]*?\\b([A-Z]\\w*(?:\\.[A-Z]\\w*)*)\\.class"
                    + "|TypeReference<([^;{]*)>");
    private static final Pattern TYPE_NAME = Pattern.compile("\\b[A-Z]\\w*(?:\\.[A-Z]\\w*)*");

    @Test
    void reflectConfigListsExactlyTheBoundClasses() throws IOException {
        StringBuilder json = new StringBuilder("[\n");
        for (String name : new TreeSet<>(AgentJson.BOUND.stream().map(Class::getName).toList())) {
            json.append(json.length() > 2 ? ",\n" : "").append("  {\"name\": \"").append(name)
                    .append("\", \"allDeclaredConstructors\": true, \"allDeclaredMethods\": true, \"allDeclaredFields\": true}");
        }
        String expected = json.append("\n]\n").toString();
        Path file = CONFIG.resolve("reflect-config.json");
        if (Boolean.getBoolean("gantry.native.update")) {
            Files.createDirectories(file.getParent());
            Files.writeString(file, expected);
        }
        assertThat(file).as("run with -Dgantry.native.update=true").exists();
        assertThat(Files.readString(file)).as(file + " (rewrite with -Dgantry.native.update=true)").isEqualTo(expected);
    }

    @Test
    void everyClassTheSourcesBindIsListed() throws IOException {
        TreeSet<String> bound = new TreeSet<>();
        try (Stream<Path> files = Files.walk(Path.of("src/main/java"))) {
            for (Path file : files.filter(f -> f.toString().endsWith(".java")).toList()) {
                Matcher m = BINDING.matcher(Files.readString(file));
                while (m.find()) {
                    if (m.group(1) != null) {
                        bound.add(m.group(1));
                    } else {
                        TYPE_NAME.matcher(m.group(2)).results().forEach(r -> bound.add(r.group()));
                    }
                }
            }
        }
        assertThat(bound).as("the scan finds the binding the agent is known to do").contains("Assignment");
        for (String simpleName : bound) {
            Class<?> type = agentClass(simpleName);
            if (type != null) { // JDK types (String, List, ...) have Jackson's own serializers
                assertThat(AgentJson.BOUND).as(type.getName() + " is bound by Jackson: add it to AgentJson.BOUND").contains(type);
            }
        }
    }

    @Test
    void theMapperBindsAnAssignmentAndRefusesUnlistedClasses() throws IOException {
        UUID job = UUID.randomUUID();
        JsonNode node = AgentJson.MAPPER.readTree("""
                {"jobId": "%s", "jobName": "train", "attempt": 7, "task": "worker-0", "taskGroup": "worker",
                 "command": ["python", "train.py"], "gpus": [2, 3], "cpuMillis": 1000, "memoryMiB": 4096, "rank": 1,
                 "worldSize": 2, "localRank": 0, "localWorldSize": 1, "nodeRank": 1, "nodes": 2, "masterAddr": "10.0.0.5",
                 "masterPort": 23456, "checkpointable": true, "checkpointGraceSeconds": 30, "stop": false,
                 "stopGraceSeconds": 0, "image": "pytorch:25", "workingDir": "/data", "env": {"A": "1"},
                 "addedLater": "ignored"}""".formatted(job));
        Assignment a = AgentJson.MAPPER.treeToValue(node, Assignment.class);
        assertThat(a.jobId()).isEqualTo(job);
        assertThat(a.gpus()).containsExactly(2, 3);
        assertThat(a.command()).containsExactly("python", "train.py");
        assertThat(a.env()).isEqualTo(Map.of("A", "1"));
        assertThat(a.checkpointGraceSeconds()).isEqualTo(30);
        // what the agent writes is maps and trees: no reflection
        assertThat(AgentJson.MAPPER.writeValueAsString(Map.of("jobId", job, "gpus", List.of(1)))).contains(job.toString());

        assertThatThrownBy(() -> AgentJson.MAPPER.treeToValue(AgentJson.MAPPER.readTree("{\"x\": 1}"), Unlisted.class))
                .isInstanceOf(IOException.class).hasMessageContaining(Unlisted.class.getName()).hasMessageContaining("AgentJson.BOUND");
        assertThatThrownBy(() -> AgentJson.MAPPER.writeValueAsString(new Unlisted(1)))
                .isInstanceOf(IOException.class).hasMessageContaining(Unlisted.class.getName()).hasMessageContaining("AgentJson.BOUND");
    }

    record Unlisted(int x) {
    }

    @Test
    void theNativeExecutableRunsTheShutdownHookOnSigterm() throws IOException {
        // NodeAgent.main stops its tasks from a shutdown hook; a native executable runs hooks on SIGTERM/SIGINT only with
        // exit handlers installed (native-image's default is off)
        assertThat(Files.readString(CONFIG.resolve("native-image.properties"))).contains("--install-exit-handlers");
    }

    private static Class<?> agentClass(String simpleName) {
        try {
            return Class.forName("dev.gantry.agent." + simpleName.replace('.', '$'));
        } catch (ClassNotFoundException e) {
            return null;
        }
    }
}
