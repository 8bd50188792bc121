package dev.gantry.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.restassured.path.json.JsonPath;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.DriverManager;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The README's Quickstart, command by command, as a newcomer types it (after the clone): {@code bin/gantry up}
 * with nothing set up, the seed's queues applied, the seed's gang submitted, {@code bin/gantry jobs} until it
 * SUCCEEDED, and the tasks' output on disk. It runs beside anything else on this machine: its own state folder,
 * ports, broker port and databases (GANTRY_STATE_DIR, GANTRY_*_PORT, GANTRY_DEV_NATS_PORT, GANTRY_DB_SUFFIX);
 * nothing else differs from what the README says.
 */
class QuickstartIT {

    private static final Path ROOT = Path.of(System.getProperty("gantry.root", "..")).toAbsolutePath().normalize();
    private static final Path STATE = Path.of("target", "quickstart-state").toAbsolutePath();
    private static final String DB_SUFFIX = "_quickstart";
    private static final Map<String, String> ENV = new LinkedHashMap<>();

    @BeforeAll
    static void freshInstance() throws Exception {
        if (Files.exists(STATE)) {
            try (Stream<Path> files = Files.walk(STATE)) {
                files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
        // a newcomer's databases are empty
        try (var connection = DriverManager.getConnection("jdbc:postgresql://127.0.0.1:5432/postgres", "gantry", "gantry");
                var statement = connection.createStatement()) {
            for (String db : List.of("admission", "quota", "inventory", "placement")) {
                statement.execute("drop database if exists gantry_" + db + DB_SUFFIX + " with (force)");
            }
        }
        ENV.put("GANTRY_STATE_DIR", STATE.toString());
        ENV.put("GANTRY_DB_SUFFIX", DB_SUFFIX);
        ENV.put("GANTRY_ADMISSION_PORT", String.valueOf(freePort()));
        ENV.put("GANTRY_QUOTA_PORT", String.valueOf(freePort()));
        ENV.put("GANTRY_NODE_INVENTORY_PORT", String.valueOf(freePort()));
        ENV.put("GANTRY_PLACEMENT_PORT", String.valueOf(freePort()));
        ENV.put("GANTRY_DEV_NATS_PORT", String.valueOf(freePort()));
    }

    @AfterAll
    static void down() {
        Result down = run("bin/gantry down", Duration.ofSeconds(60));
        System.out.println("QuickstartIT: bin/gantry down: " + down.out().strip());
    }

    @Test
    void theReadmesQuickstartEndsWithAFinishedGangThatRanOnTheAgentsGpus() throws Exception {
        List<String> commands = quickstartCommands();
        assertThat(commands).as("the Quickstart's commands after the clone").hasSize(4);
        assertThat(commands.get(0)).isEqualTo("bin/gantry up");

        Result up = run(commands.get(0), Duration.ofMinutes(5));
        assertThat(up.exit()).as(up.err()).isZero();
        assertThat(up.out()).contains("Gantry is up:").contains("Next steps").contains("bin/gantry submit examples/seed/tf-dist-train.yaml");
        Result nodes = run("bin/gantry nodes", Duration.ofSeconds(30));
        assertThat(nodes.exit()).as(nodes.err()).isZero();
        assertThat(nodes.out()).as("two simulated 8-GPU nodes, run by agents").contains("agent,simulated");

        Result apply = run(commands.get(1), Duration.ofSeconds(30));
        assertThat(apply.exit()).as(apply.err()).isZero();
        assertThat(apply.out()).contains("queue urgent: applied", "queue normal: applied", "priority class high-priority: applied");

        Result submit = run(commands.get(2), Duration.ofSeconds(30));
        assertThat(submit.exit()).as(submit.err()).isZero();
        Matcher submitted = Pattern.compile("submitted job ([0-9a-f-]{36}) \\(tf-dist-train, queue normal, 3 GPUs\\): QUEUED").matcher(submit.out().strip());
        assertThat(submitted.matches()).as(submit.out()).isTrue();
        String id = submitted.group(1);

        // bin/gantry jobs, as the README says, until the job has SUCCEEDED
        await().atMost(Duration.ofSeconds(120)).pollInterval(Duration.ofSeconds(1)).until(() -> {
            Result jobs = run(commands.get(3), Duration.ofSeconds(30));
            return jobs.exit() == 0 && jobs.out().lines().anyMatch(l -> l.startsWith(id) && l.contains("SUCCEEDED"));
        });
        Result json = run("bin/gantry jobs --json", Duration.ofSeconds(30));
        assertThat(JsonPath.from(json.out()).getString("find { it.id == '" + id + "' }.owner")).isEqualTo(System.getProperty("user.name"));

        // each task printed its rank, the world size and exactly its GPUs, disjoint from the other's
        List<Path> logs;
        try (Stream<Path> files = Files.walk(STATE.resolve("agent"))) {
            logs = files.filter(p -> p.toString().contains("/jobs/" + id + "/") && p.toString().endsWith(".log")).toList();
        }
        assertThat(logs).as("a log per task").hasSize(2);
        Set<String> ranks = new HashSet<>();
        List<String> gpus = new ArrayList<>();
        Pattern line = Pattern.compile("rank=([01]) world=2 gpus=([0-9,]+)");
        for (Path log : logs) {
            Matcher m = line.matcher(Files.readString(log, StandardCharsets.UTF_8));
            assertThat(m.find()).as(log + ": " + Files.readString(log)).isTrue();
            ranks.add(m.group(1));
            String node = log.getParent().getParent().getParent().getParent().getFileName().toString();
            for (String gpu : m.group(2).split(",")) {
                gpus.add(node + "/" + gpu);
            }
        }
        assertThat(ranks).containsExactlyInAnyOrder("0", "1");
        assertThat(gpus).as("1 GPU for ps and 2 for the worker, none shared").hasSize(3).doesNotHaveDuplicates();
        Result history = run("bin/gantry jobs history " + id, Duration.ofSeconds(30));
        assertThat(history.exit()).as(history.err()).isZero();
        assertThat(history.out()).contains("SUCCEEDED");
    }

    /** The lines of the README's Quickstart code block, comments and the clone left out. */
    static List<String> quickstartCommands() throws IOException {
        String readme = Files.readString(ROOT.resolve("README.md"));
        Matcher block = Pattern.compile("(?s)## Quickstart[^\\n]*\\n+```bash\\n(.*?)```").matcher(readme);
        assertThat(block.find()).as("README.md has a Quickstart with a bash block").isTrue();
        return block.group(1).lines().map(l -> l.replaceAll("\\s+#.*$", "").strip())
                .filter(l -> !l.isEmpty() && !l.startsWith("git clone")).toList();
    }

    record Result(int exit, String out, String err) {
    }

    /** One command line of the README, run from the repository root as a shell would (the user's own identity). */
    static Result run(String commandLine, Duration limit) {
        ProcessBuilder builder = new ProcessBuilder("bash", "-c", commandLine).directory(ROOT.toFile());
        Map<String, String> environment = builder.environment();
        for (String inherited : List.of("GANTRY_TOKEN", "GANTRY_ADMIN_TOKEN", "GANTRY_TEAMS", "GANTRY_JWT_DIR", "GANTRY_DB_USER",
                "GANTRY_DB_PASSWORD", "GANTRY_NATS_URL", "GANTRY_ADMISSION_URL", "GANTRY_QUOTA_URL", "GANTRY_NODE_INVENTORY_URL",
                "GANTRY_PLACEMENT_URL", "GANTRY_UP_AGENTS", "GANTRY_UP_SIMULATE", "GANTRY_DEPLOYMENT")) {
            environment.remove(inherited);
        }
        environment.put("USER", System.getProperty("user.name"));
        environment.putAll(ENV);
        try {
            Path out = Files.createTempFile("gantry-quickstart", ".out");
            Path err = Files.createTempFile("gantry-quickstart", ".err");
            Process process = builder.redirectOutput(out.toFile()).redirectError(err.toFile()).start();
            if (!process.waitFor(limit.toSeconds(), TimeUnit.SECONDS)) {
                process.destroyForcibly();
                throw new AssertionError(commandLine + " did not finish in " + limit + ": " + Files.readString(err));
            }
            Result result = new Result(process.exitValue(), Files.readString(out), Files.readString(err));
            Files.delete(out);
            Files.delete(err);
            return result;
        } catch (IOException e) {
            throw new IllegalStateException("cannot run " + commandLine, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        }
    }
}
