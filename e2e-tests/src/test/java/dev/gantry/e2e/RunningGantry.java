package dev.gantry.e2e;

import dev.gantry.testing.FreshTestConsumers;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Starts the four packaged services (the runner jars {@code bin/gantry up} starts) on ports of
 * their own and databases of their own ({@code gantry_e2e_*}), so a developer's running Gantry is
 * left alone; stops them after the test class. Logs go to {@code target/e2e-logs/<test class>/}.
 */
public class RunningGantry implements BeforeAllCallback, AfterAllCallback {

    /** service -> (module directory, port) */
    static final Map<String, Service> SERVICES = new LinkedHashMap<>();

    record Service(String module, int port, String database) {
        String url() {
            return "http://127.0.0.1:" + port;
        }
    }

    /**
     * Where the services listen: {@code -Dgantry.e2e.port-base=N} puts them on N+1..N+4 (default 19080: 19081-19084), and
     * {@code -Dgantry.e2e.db-suffix=S} on databases {@code gantry_e2e_<service>S} (default none), so one test class can run
     * beside someone else's run of the module.
     */
    static final int PORT_BASE = Integer.getInteger("gantry.e2e.port-base", 19080);
    static final String DB_SUFFIX = System.getProperty("gantry.e2e.db-suffix", "");

    static {
        SERVICES.put("admission-service", new Service("admission-service", PORT_BASE + 1, "gantry_e2e_admission" + DB_SUFFIX));
        SERVICES.put("quota-service", new Service("quota-service", PORT_BASE + 2, "gantry_e2e_quota" + DB_SUFFIX));
        SERVICES.put("node-inventory-service", new Service("node-inventory-service", PORT_BASE + 3, "gantry_e2e_inventory" + DB_SUFFIX));
        SERVICES.put("placement-service", new Service("placement-service/app", PORT_BASE + 4, "gantry_e2e_placement" + DB_SUFFIX));
    }

    /**
     * The broker the services use: the shared one on 4222, unless {@code -Dgantry.e2e.nats-url} names
     * a private one (then other people's tests on 4222 cannot put jobs on these services' nodes).
     */
    static final String NATS_URL = System.getProperty("gantry.e2e.nats-url", "nats://127.0.0.1:4222");

    /**
     * A folder of broker passwords ({@code bin/lib/infra.sh write_broker_config}'s credentials/): with it each
     * service connects as its own user, as under {@code bin/gantry up}, to a broker that requires it.
     */
    static final String NATS_CREDENTIALS = System.getProperty("gantry.e2e.nats-credentials", "");

    /**
     * The database role the packaged services log in as: they have no default outside the dev and test profiles
     * (service-kit's RequiredDatabaseCredentials), so it is always passed, in the environment as {@code bin/gantry up}
     * does. The role bin/lib/infra.sh ensure_databases creates, unless GANTRY_DB_USER / GANTRY_DB_PASSWORD name another.
     */
    static final String DB_USER = envOr("GANTRY_DB_USER", "gantry");
    static final String DB_PASSWORD = envOr("GANTRY_DB_PASSWORD", "gantry");

    private static String envOr(String name, String fallback) {
        String value = System.getenv(name);
        return value == null || value.isBlank() ? fallback : value;
    }

    /** Puts the database credentials into the environment of a service about to start. */
    static ProcessBuilder withDatabaseCredentials(ProcessBuilder builder) {
        builder.environment().put("GANTRY_DB_USER", DB_USER);
        builder.environment().put("GANTRY_DB_PASSWORD", DB_PASSWORD);
        return builder;
    }

    private static final Map<String, String> NATS_USER = Map.of("admission-service", "admission", "quota-service", "quota",
            "node-inventory-service", "inventory", "placement-service", "placement");

    /** The process of each service started last (a restart replaces it). */
    private static final Map<String, Process> LATEST = new LinkedHashMap<>();
    /** The logs of the running test class: each class keeps its own, so a failure in CI can be read afterwards. */
    private static Path logs = Path.of("target", "e2e-logs");

    public static String url(String service) {
        return SERVICES.get(service).url();
    }

    /**
     * Configuration a test class gives placement-service ({@code key=value} system properties), e.g. a
     * disruption budget that lets jobs placed a moment ago move; read from the class at start.
     */
    @java.lang.annotation.Retention(java.lang.annotation.RetentionPolicy.RUNTIME)
    @java.lang.annotation.Target(java.lang.annotation.ElementType.TYPE)
    public @interface PlacementProperties {
        String[] value();
    }

    /** The running class's {@link PlacementProperties}. */
    private static List<String> placementProperties = List.of();

    @Override
    public void beforeAll(ExtensionContext context) throws Exception {
        PlacementProperties own = context.getRequiredTestClass().getAnnotation(PlacementProperties.class);
        placementProperties = own == null ? List.of() : List.of(own.value());
        logs = Path.of("target", "e2e-logs", context.getRequiredTestClass().getSimpleName());
        Files.createDirectories(logs);
        // placement's e2e consumers start from now, not from whatever the broker kept since the last run
        if (NATS_CREDENTIALS.isEmpty()) {
            FreshTestConsumers.deleteConsumers(NATS_URL, "-e2e");
        } // else a broker of the run's own, with no consumers yet

        for (String name : SERVICES.keySet()) {
            launch(name, true);
        }
        for (var entry : SERVICES.entrySet()) {
            // a loaded machine (shared CI runner) may need longer: -Dgantry.e2e.ready-timeout-seconds=N
            awaitReady(entry.getKey(), entry.getValue(), Duration.ofSeconds(Long.getLong("gantry.e2e.ready-timeout-seconds", 120)));
        }
    }

    /**
     * Starts one packaged service; {@code clean} empties its database first (a fresh run), without
     * it the service starts on what it left behind (a restart).
     */
    private static Process launch(String name, boolean clean) throws IOException {
        return launch(name, name, clean);
    }

    /** Starts {@code name} (a key of {@link #SERVICES}) configured as {@code service}. */
    private static Process launch(String name, String service, boolean clean) throws IOException {
        Service where = SERVICES.get(name);
        Path root = Path.of(System.getProperty("gantry.root", ".."));
        Path jar = root.resolve(where.module()).resolve("target/quarkus-app/quarkus-run.jar");
        if (!Files.exists(jar)) {
            throw new IllegalStateException("not packaged: " + jar + " (run mvn verify from the repository root)");
        }
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<String> command = new ArrayList<>(List.of(java,
                "-Dquarkus.http.port=" + where.port(),
                "-Dgantry.db.name=" + where.database(),
                "-Dgantry.nats.url=" + NATS_URL,
                "-Dquarkus.log.console.json.enabled=false"));
        if (clean) {
            // a clean schema per run, as in the services' own tests
            command.addAll(List.of("-Dquarkus.flyway.clean-disabled=false", "-Dquarkus.flyway.clean-at-start=true"));
        }
        command.addAll(extraArguments(service));
        if (!name.equals(service)) {
            // a replica shares its database with the first process: a small pool keeps both under PostgreSQL's 100 connections
            command.add("-Dquarkus.datasource.reactive.max-size=4");
        }
        command.addAll(List.of("-jar", jar.toString()));
        Path log = logs.resolve(name + (clean ? "" : "-restarted-" + System.currentTimeMillis()) + ".log");
        ProcessBuilder builder = withDatabaseCredentials(new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()));
        if (!NATS_CREDENTIALS.isEmpty()) {
            String user = NATS_USER.get(service);
            builder.environment().put("GANTRY_NATS_USERNAME", user);
            builder.environment().put("GANTRY_NATS_PASSWORD", Files.readString(Path.of(NATS_CREDENTIALS, user)).strip());
        }
        Process process = builder.start();
        LATEST.put(name, process);
        return process;
    }

    /**
     * Kills a service at once (SIGKILL: no shutdown hooks, nothing flushed), starts it again on the
     * same database and waits until it is ready: what a crash and a restart by Kubernetes do.
     */
    public static void killAndRestart(String name) throws Exception {
        Process running = LATEST.get(name);
        running.destroyForcibly();
        running.waitFor(30, java.util.concurrent.TimeUnit.SECONDS);
        launch(name, false);
        awaitReady(name, SERVICES.get(name), Duration.ofSeconds(120));
    }

    /**
     * Starts another process of a running service on {@code port}, on the same database and the same
     * durable consumers (a second replica, as during a rollout); stopped with the others after the class.
     */
    public static String launchReplica(String name, int port) throws Exception {
        Service first = SERVICES.get(name);
        Service replica = new Service(first.module(), port, first.database());
        String key = name + "@" + port;
        SERVICES.put(key, replica);
        try {
            launch(key, name, false);
        } finally {
            SERVICES.remove(key);
        }
        awaitReady(key, replica, Duration.ofSeconds(120));
        return replica.url();
    }

    /** The process started last for {@code name} (a replica: {@code name@port}). */
    public static Process process(String name) {
        return LATEST.get(name);
    }

    /** The seed's tf-dist-train Volcano Job, as users submit or paste it. */
    static String seedTfDistTrain() {
        try {
            return Files.readString(Path.of("src/test/resources/tf-dist-train.yaml"));
        } catch (IOException e) {
            throw new IllegalStateException("cannot read the seed manifest", e);
        }
    }

    /** The test key pair every service verifies tokens with; {@link #token} signs with its private half. */
    static Path jwtDir() {
        return Path.of(System.getProperty("gantry.root", "..")).resolve("test-support/src/main/resources/jwt");
    }

    /** A user's bearer token minted by {@code bin/gantry token}, as users get theirs. */
    public static String token(String user, String team) {
        return mint(user, "--team", team);
    }

    private static String admin;

    /** An admin's token ({@code bin/gantry token root --admin}): what changes quota, inventory and placement. */
    public static synchronized String adminToken() {
        if (admin == null) {
            admin = mint("root", "--admin");
        }
        return admin;
    }

    /** The node agent's token for one node ({@code bin/gantry token agent --agent NODE}). */
    public static String agentToken(String node) {
        return mint("agent-" + node, "--agent", node);
    }

    /** Runs {@code bin/gantry token ARGS} with the test key pair; its one line of output is the token. */
    static String mint(String... args) {
        Path root = Path.of(System.getProperty("gantry.root", ".."));
        List<String> command = new ArrayList<>(List.of(root.resolve("bin/gantry").toString(), "token"));
        command.addAll(List.of(args));
        ProcessBuilder mint = new ProcessBuilder(command);
        mint.environment().put("GANTRY_JWT_DIR", jwtDir().toString());
        try {
            Process process = mint.start();
            String token = new String(process.getInputStream().readAllBytes()).trim();
            if (process.waitFor() != 0) {
                throw new IllegalStateException("bin/gantry token failed: " + new String(process.getErrorStream().readAllBytes()));
            }
            return token;
        } catch (IOException | InterruptedException e) {
            throw new IllegalStateException("cannot run bin/gantry token", e);
        }
    }

    private static List<String> extraArguments(String service) {
        // every service reads the streams through durable consumers of its own, created fresh for the
        // run, so it never competes with a dev instance nor works through what the broker kept
        List<String> arguments = new ArrayList<>(consumers(service, "e2e"));
        // loopback only, as bin/gantry up; every service verifies tokens with the test key pair's public half
        arguments.addAll(List.of("-Dquarkus.http.host=127.0.0.1", "-Dgantry.jwt.public-key=" + jwtDir().resolve("public.pem")));
        if (service.equals("admission-service")) {
            // admission signs its service tokens (quota checks, console reads) with the private half
            arguments.addAll(List.of("-Dgantry.jwt.private-key=" + jwtDir().resolve("private.pem"),
                    "-Dgantry.quota.url=" + url("quota-service"),
                    // the web console reads nodes and allocations from these
                    "-Dgantry.inventory.url=" + url("node-inventory-service"),
                    "-Dgantry.placement.url=" + url("placement-service")));
        }
        if (service.equals("node-inventory-service")) {
            // the node view asks placement which nodes it quarantined
            arguments.add("-Dgantry.placement.url=" + url("placement-service"));
        }
        if (service.equals("placement-service")) {
            // a job without a runtime estimate (a Volcano manifest) runs 72 s here, long enough to be looked at
            arguments.add("-Dgantry.placement.standalone.default-runtime=2h");
            placementProperties.forEach(p -> arguments.add("-D" + p));
        }
        return arguments;
    }

    /** Each service's incoming channels: stream, channel, consumer name without its suffix, subjects. */
    private static final Map<String, String[][]> CHANNELS = Map.of(
            "admission-service", new String[][] {{"PLACEMENTS", "placements-in", "admission-placements-", "placements.>"}},
            "quota-service", new String[][] {{"JOBS", "jobs-in", "quota-jobs-", "jobs.>"},
                    {"PLACEMENTS", "placements-in", "quota-placements-", "placements.>"}, {"NODES", "nodes-in", "quota-nodes-", "nodes.>"}},
            "placement-service", new String[][] {{"JOBS", "jobs-in", "placement-jobs-", "jobs.>"},
                    {"NODES", "nodes-in", "placement-nodes-", "nodes.>"}, {"QUOTA", "quota-in", "placement-quota-", "quota.>"}});

    /**
     * The service's durable consumers named {@code <production name>-<suffix>}, delivering only what
     * is published from their creation on (none for a service that reads no stream).
     */
    static List<String> consumers(String service, String suffix) {
        List<String> arguments = new ArrayList<>();
        for (String[] c : CHANNELS.getOrDefault(service, new String[0][])) {
            String name = c[2] + suffix;
            String consumer = "quarkus.messaging.nats.streams." + c[0] + ".pull-consumers." + name + ".consumer-configuration.";
            arguments.addAll(List.of(
                    "-Dmp.messaging.incoming." + c[1] + ".consumer=" + name,
                    "-D" + consumer + "durable=true",
                    "-D" + consumer + "filter-subjects=" + c[3],
                    "-D" + consumer + "deliver-policy=new",
                    "-D" + consumer + "payload-type=com.fasterxml.jackson.databind.JsonNode"));
        }
        return arguments;
    }

    static void awaitReady(String name, Service service, Duration timeout) throws InterruptedException {
        HttpClient http = HttpClient.newHttpClient();
        long deadline = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() < deadline) {
            try {
                HttpResponse<Void> response = http.send(
                        HttpRequest.newBuilder(URI.create(service.url() + "/q/health/ready")).build(),
                        HttpResponse.BodyHandlers.discarding());
                if (response.statusCode() == 200) {
                    return;
                }
            } catch (IOException notYet) {
                // still starting
            }
            Thread.sleep(250);
        }
        throw new IllegalStateException(name + " not ready after " + timeout + "; see " + logs.resolve(name + ".log"));
    }

    @Override
    public void afterAll(ExtensionContext context) throws InterruptedException {
        for (Process process : LATEST.values()) {
            process.destroy();
        }
        for (Process process : LATEST.values()) {
            if (!process.waitFor(15, java.util.concurrent.TimeUnit.SECONDS)) {
                process.destroyForcibly();
            }
        }
        LATEST.clear();
    }
}
