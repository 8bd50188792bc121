package dev.gantry.e2e;

import dev.gantry.contracts.events.EventEnvelope;
import dev.gantry.contracts.events.Subjects;
import dev.gantry.contracts.jobs.JobQueued;
import dev.gantry.contracts.nodes.NodeChanged;
import dev.gantry.contracts.nodes.NodeInfo;
import dev.gantry.testing.FreshTestConsumers;
import dev.gantry.testing.TestNats;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The placement service under the load of issue 7's target (a benchmark, not a test): the packaged
 * service on its own database and consumers, 1,000 nodes (900 DGX A100 under 30 leaves, 100 T4
 * nodes) and 2,000 queued jobs that all ask for A100 GPUs in a Philly-like size mix, so the A100s
 * fill up and most of the line keeps waiting. It prints the windows' duration against the solver
 * profile's limit + 20%, then sends lone 1-GPU T4 jobs one at a time and prints how many took the
 * fast path and how long each took from its event to its binding. With {@code -Dchurn=N}, N
 * urgent 8-GPU jobs arrive each second of the measured minute, so its windows preempt and place.
 *
 * <p>Run: {@code mvn -B -q -pl e2e-tests test-compile exec:java -Dexec.classpathScope=test
 * -Dexec.mainClass=dev.gantry.e2e.PlacementServiceBenchmark} (after {@code mvn install -DskipTests}).
 */
public final class PlacementServiceBenchmark {

    private static final int PORT = 19184;
    private static final String DATABASE = "gantry_bench_placement";
    private static final HttpClient HTTP = HttpClient.newHttpClient();

    private PlacementServiceBenchmark() {
    }

    public static void main(String[] args) throws Exception {
        String profile = System.getProperty("profile", "fast");
        int nodes = Integer.getInteger("nodes", 1000);
        int jobs = Integer.getInteger("jobs", 2000);
        recreateDatabase();
        FreshTestConsumers.deleteConsumers("nats://127.0.0.1:4222", "-bench");
        Process service = start(profile);
        try {
            RunningGantry.awaitReady("placement-service", new RunningGantry.Service("placement-service/app", PORT, DATABASE),
                    Duration.ofSeconds(120));
            Random random = new Random(7);
            try (TestNats nats = TestNats.connect("nats://127.0.0.1:4222")) {
                for (int i = 0; i < nodes; i++) {
                    NodeInfo node = i < nodes * 9 / 10 ? a100(i) : t4(i);
                    nats.publish(EventEnvelope.of(Subjects.NODES_UPSERTED, node.name(), new NodeChanged(i + 1, node)));
                }
                Instant start = Instant.now().minusSeconds(3600);
                for (int i = 0; i < jobs; i++) {
                    UUID id = UUID.randomUUID();
                    nats.publish(EventEnvelope.of(Subjects.JOBS_QUEUED, id.toString(), philly(id, i, random, start.plusSeconds(i))));
                }
            }
            System.out.printf("published %d nodes and %d jobs; profile %s%n", nodes, jobs, profile);
            long deadline = System.nanoTime() + Duration.ofMinutes(5).toNanos();
            while (count("select count(*) from pending_job") + count("select count(*) from running_job") < jobs
                    && System.nanoTime() < deadline) {
                Thread.sleep(1000);
            }
            // the first windows bind the first thousand jobs; measure the steady state after them: two
            // windows in a row that leave the line as it was
            long settled = System.nanoTime() + Duration.ofMinutes(5).toNanos();
            long lastPending = -1;
            int still = 0;
            while (still < 2 && System.nanoTime() < settled) {
                double windows = figure("gantry_placement_window_seconds_count");
                while (figure("gantry_placement_window_seconds_count") == windows && System.nanoTime() < settled) {
                    Thread.sleep(200);
                }
                long pending = count("select count(*) from pending_job");
                still = pending == lastPending ? still + 1 : 0;
                lastPending = pending;
            }
            System.out.printf("settled: %d pending after %.0f windows%n", lastPending, figure("gantry_placement_window_seconds_count"));
            Map<String, Double> before = windowFigures();
            int churn = Integer.getInteger("churn", 0);
            Thread churning = churn == 0 ? null : Thread.ofPlatform().daemon().start(() -> publishUrgentJobs(churn));
            Thread.sleep(Integer.getInteger("seconds", 60) * 1000L);
            if (churning != null) {
                churning.interrupt();
                churning.join();
            }
            Map<String, Double> after = windowFigures();
            double windows = after.get("count") - before.get("count");
            double mean = (after.get("sum") - before.get("sum")) / Math.max(1, windows);
            double limit = after.get("limit");
            double solveMean = (after.get("solveSum") - before.get("solveSum")) / Math.max(1, after.get("solveCount") - before.get("solveCount"));
            System.out.printf("steady state: %d pending, %d running; %.0f windows, mean %.0f ms, max (recent) %.0f ms; "
                    + "limit %.0f ms, limit + 20%% %.0f ms; overruns %.0f of %.0f; planner (solve) mean %.0f ms, the rest of the window "
                    + "(reading the state, building the scenario, checking, binding, reasons) %.0f ms%n",
                    count("select count(*) from pending_job"), count("select count(*) from running_job"), windows, mean * 1000,
                    after.get("max") * 1000, limit * 1000, limit * 1200, after.get("overruns") - before.get("overruns"), windows, solveMean * 1000,
                    (mean - solveMean) * 1000);

            double preempted = after.get("preempted") - before.get("preempted");
            double placed = after.get("placed") - before.get("placed");
            double bindSum = after.get("bind.sum") - before.get("bind.sum");
            System.out.printf("solver fallbacks (greedy plan kept): %.0f of %.0f windows; jobs preempted: %.0f, placed: %.0f; "
                    + "binding: %.1f ms per job preempted or placed%n",
                    after.get("fallbacks") - before.get("fallbacks"), windows, preempted, placed,
                    preempted + placed == 0 ? 0 : bindSum * 1000 / (preempted + placed));
            System.out.println("window steps, mean over the measured windows: " + phases(before, after, "read", "gauges", "plan", "build", "check", "bind", "reasons"));

            int lone = Integer.getInteger("lone", 20);
            int fast = 0;
            List<Long> latencies = new ArrayList<>();
            try (TestNats nats = TestNats.connect("nats://127.0.0.1:4222")) {
                for (int i = 0; i < lone; i++) {
                    double fastBefore = figure("gantry_placement_fastpath_seconds_count");
                    double sumBefore = figure("gantry_placement_fastpath_seconds_sum");
                    UUID id = UUID.randomUUID();
                    long sent = System.nanoTime();
                    nats.publish(EventEnvelope.of(Subjects.JOBS_QUEUED, id.toString(), loneT4(id)));
                    while (count("select count(*) from running_job where job_id = '" + id + "'") == 0
                            && System.nanoTime() - sent < Duration.ofSeconds(10).toNanos()) {
                        Thread.sleep(5);
                    }
                    long publishToBound = (System.nanoTime() - sent) / 1_000_000;
                    double fastAfter = figure("gantry_placement_fastpath_seconds_count");
                    if (fastAfter > fastBefore) {
                        fast++;
                        latencies.add(Math.round((figure("gantry_placement_fastpath_seconds_sum") - sumBefore) * 1000));
                    }
                    System.out.printf("lone job %2d: %s, publish-to-bound %d ms (polled every 5 ms)%n", i,
                            fastAfter > fastBefore ? "fast path" : "window", publishToBound);
                    Thread.sleep(700 + i * 37L % 900); // spread the sends over the window cycle
                }
            }
            Map<String, Double> afterLone = windowFigures();
            System.out.println("fast path steps, mean: " + phases(after, afterLone, "fastpath-read", "fastpath-plan", "fastpath-build", "fastpath-check", "fastpath-bind"));
            latencies.sort(Long::compare);
            System.out.printf("fast path: %d of %d lone jobs; event-to-bound inside the service: median %d ms, max %d ms%n", fast, lone,
                    latencies.isEmpty() ? -1 : latencies.get(latencies.size() / 2),
                    latencies.isEmpty() ? -1 : latencies.get(latencies.size() - 1));
        } finally {
            service.destroy();
            service.waitFor();
        }
    }

    private static Process start(String profile) throws Exception {
        // exec:java runs inside Maven's JVM, which knows the project root; failsafe passes gantry.root
        Path root = Path.of(System.getProperty("gantry.root", System.getProperty("maven.multiModuleProjectDirectory", "..")));
        Path jar = root.resolve("placement-service/app/target/quarkus-app/quarkus-run.jar");
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Dquarkus.http.port=" + PORT, "-Dgantry.db.name=" + DATABASE, "-Dquarkus.log.console.json.enabled=false",
                "-Dgantry.placement.profile=" + profile, "-Dgantry.placement.standalone.speedup=1"));
        if (System.getProperty("minShare") != null) {
            command.add("-Dgantry.placement.solver.min-share=" + System.getProperty("minShare"));
        }
        command.addAll(RunningGantry.consumers("placement-service", "bench"));
        command.addAll(List.of("-jar", jar.toString()));
        Files.createDirectories(Path.of("target"));
        return RunningGantry.withDatabaseCredentials(new ProcessBuilder(command).redirectErrorStream(true)
                .redirectOutput(Path.of("target", "bench-placement.log").toFile())).start();
    }

    private static NodeInfo a100(int i) {
        int leaf = i / 30;
        return new NodeInfo("dgx-%04d".formatted(i), "A100-SXM4-80GB", 8, List.of(List.of(0, 1, 2, 3, 4, 5, 6, 7)),
                List.of(List.of(0, 1, 2, 3), List.of(4, 5, 6, 7)), false, 224_000, 1_900_000,
                new NodeInfo.Topology("z1", "sp" + leaf / 8, "lf" + leaf), "ib-" + leaf / 8, Map.of(), List.of(), true,
                NodeInfo.Health.READY, 81_920, null, 8, false, Instant.now());
    }

    private static NodeInfo t4(int i) {
        return new NodeInfo("t4-%04d".formatted(i), "T4", 4, List.of(), List.of(), false, 64_000, 256_000,
                new NodeInfo.Topology("z1", "sp-t4", "lf-t4-" + i / 25), null, Map.of(), List.of(), true, NodeInfo.Health.READY,
                16_384, null, 0, false, Instant.now());
    }

    /** Philly-like sizes (45% 1 GPU ... 2% 64-GPU gangs), every one asking for A100s, running for hours. */
    private static JobQueued philly(UUID id, int i, Random random, Instant submitted) {
        double p = random.nextDouble();
        int replicas = 1;
        int gpus;
        if (p < 0.45) {
            gpus = 1;
        } else if (p < 0.65) {
            gpus = 2;
        } else if (p < 0.83) {
            gpus = 4;
        } else if (p < 0.93) {
            gpus = 8;
        } else if (p < 0.98) {
            gpus = 8;
            replicas = 2;
        } else {
            gpus = 8;
            replicas = 8;
        }
        return new JobQueued(id, "bench-" + i, "q" + i % 4, "bench", random.nextInt(3) * 100, submitted, null,
                List.of(new JobQueued.TaskGroup("worker", replicas, gpus, null, 2000, 8000)), List.of("A100-SXM4-80GB"), null,
                replicas > 1 ? new JobQueued.Network("leaf", null) : null, false, Map.of(), List.of(), true, false, 36_000L);
    }

    /**
     * {@code perSecond} 8-GPU jobs of priority 250 each second until interrupted: on a full cluster
     * each displaces lower-priority jobs, so the measured windows bind preemptions and placements
     * every time (-Dchurn=N), not only when the settled line happens to allow it.
     */
    private static void publishUrgentJobs(int perSecond) {
        try (TestNats nats = TestNats.connect("nats://127.0.0.1:4222")) {
            int i = 0;
            while (!Thread.currentThread().isInterrupted()) {
                for (int k = 0; k < perSecond; k++, i++) {
                    UUID id = UUID.randomUUID();
                    nats.publish(EventEnvelope.of(Subjects.JOBS_QUEUED, id.toString(), new JobQueued(id, "urgent-" + i, "q" + i % 4, "bench",
                            250, Instant.now(), null, List.of(new JobQueued.TaskGroup("worker", 1, 8, null, 2000, 8000)),
                            List.of("A100-SXM4-80GB"), null, null, false, Map.of(), List.of(), true, false, 36_000L)));
                }
                Thread.sleep(1000);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (Exception e) {
            throw new IllegalStateException("publishing urgent jobs failed", e);
        }
    }

    private static JobQueued loneT4(UUID id) {
        return new JobQueued(id, "lone-" + id.toString().substring(0, 8), "q0", "bench", 100, Instant.now(), null,
                List.of(new JobQueued.TaskGroup("main", 1, 1, null, 1000, 4000)), List.of("T4"), null, null, false, Map.of(), List.of(),
                true, false, 36_000L);
    }

    private static void recreateDatabase() throws Exception {
        try (Connection c = DriverManager.getConnection("jdbc:postgresql://127.0.0.1:5432/postgres", "postgres", "")) {
            c.createStatement().execute("drop database if exists " + DATABASE + " with (force)");
            c.createStatement().execute("create database " + DATABASE + " owner gantry");
        }
    }

    private static long count(String sql) throws Exception {
        try (Connection c = DriverManager.getConnection("jdbc:postgresql://127.0.0.1:5432/" + DATABASE, "gantry", "gantry");
                ResultSet rs = c.createStatement().executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        }
    }

    /** The mean time of each window step between two readings, e.g. "read 120 ms, plan 150 ms". */
    private static String phases(Map<String, Double> before, Map<String, Double> after, String... names) {
        List<String> parts = new ArrayList<>();
        for (String name : names) {
            double count = after.get(name + ".count") - before.get(name + ".count");
            double sum = after.get(name + ".sum") - before.get(name + ".sum");
            parts.add("%s %.0f ms".formatted(name, count == 0 ? 0 : sum / count * 1000));
        }
        return String.join(", ", parts);
    }

    private static Map<String, Double> windowFigures() throws Exception {
        Map<String, Double> figures = new java.util.HashMap<>();
        for (String phase : List.of("read", "gauges", "plan", "build", "check", "bind", "reasons", "fastpath-read", "fastpath-plan", "fastpath-build",
                "fastpath-check", "fastpath-bind")) {
            figures.put(phase + ".count", figure("gantry_placement_window_phase_seconds_count", phase));
            figures.put(phase + ".sum", figure("gantry_placement_window_phase_seconds_sum", phase));
        }
        figures.put("fallbacks", figure("gantry_placement_solver_fallbacks_total"));
        figures.put("preempted", figure("gantry_placement_jobs_preempted_total"));
        figures.put("placed", figure("gantry_placement_jobs_placed_total"));
        figures.putAll(Map.of("count", figure("gantry_placement_window_seconds_count"), "sum", figure("gantry_placement_window_seconds_sum"),
                "max", figure("gantry_placement_window_seconds_max"), "limit", figure("gantry_placement_window_limit_seconds"),
                "overruns", figure("gantry_placement_window_overruns_total"), "solveCount", figure("gantry_placement_solve_seconds_count"),
                "solveSum", figure("gantry_placement_solve_seconds_sum")));
        return figures;
    }

    /** A figure of one phase: the line whose labels hold phase="..." */
    private static double figure(String name, String phase) throws Exception {
        String metrics = HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + PORT + "/q/metrics")).build(),
                HttpResponse.BodyHandlers.ofString()).body();
        Matcher m = Pattern.compile("(?m)^" + Pattern.quote(name) + "\\{[^}]*phase=\"" + Pattern.quote(phase) + "\"[^}]*} ([0-9.eE+-]+)$")
                .matcher(metrics);
        return m.find() ? Double.parseDouble(m.group(1)) : 0;
    }

    private static double figure(String name) throws Exception {
        String metrics = HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + PORT + "/q/metrics")).build(),
                HttpResponse.BodyHandlers.ofString()).body();
        Matcher m = Pattern.compile("(?m)^" + Pattern.quote(name) + "(\\{[^}]*})? ([0-9.eE+-]+)$").matcher(metrics);
        return m.find() ? Double.parseDouble(m.group(2)) : 0;
    }
}
