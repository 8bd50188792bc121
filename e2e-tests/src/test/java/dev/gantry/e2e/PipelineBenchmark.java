package dev.gantry.e2e;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The whole pipeline under a burst (issue 18, a benchmark, not a test): against a running Gantry
 * ({@code bin/gantry up}), 40 users of one team submit 50 one-GPU jobs each through REST, all at
 * once, onto a 300-node cluster; it prints the submission rate, p50/p99 of the submit latency, and
 * how long each job took from its submission until admission showed it PLACED (the user's view, so
 * the outbox relays of admission and placement, both consumers and the window are all in it).
 *
 * <p>The jobs ask for a long runtime, so none completes during the run; they are cancelled at the
 * end. Each run uses a queue of its own ({@code bench-<time>}). The cluster file it applies
 * replaces the file nodes of the instance.
 *
 * <p>Run (Gantry up without node agents, {@code GANTRY_UP_AGENTS=0 bin/gantry up}, from the repository root): {@code mvn -B -q -pl e2e-tests test-compile exec:java
 * -Dexec.classpathScope=test -Dexec.mainClass=dev.gantry.e2e.PipelineBenchmark} with
 * {@code -Dusers=40 -Djobs-per-user=50 -Dnodes=300} (defaults) and the URLs of {@code bin/gantry}'s
 * clients ({@code GANTRY_ADMISSION_URL}, ...) when not the default ports.
 */
public final class PipelineBenchmark {

    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private static final Pattern ID = Pattern.compile("\"id\"\\s*:\\s*\"([0-9a-f-]{36})\"");

    private PipelineBenchmark() {
    }

    public static void main(String[] args) throws Exception {
        int users = Integer.getInteger("users", 40);
        int jobsPerUser = Integer.getInteger("jobs-per-user", 50);
        int nodes = Integer.getInteger("nodes", 300);
        String admission = env("GANTRY_ADMISSION_URL", "http://127.0.0.1:8081");
        String quota = env("GANTRY_QUOTA_URL", "http://127.0.0.1:8082");
        String inventory = env("GANTRY_NODE_INVENTORY_URL", "http://127.0.0.1:8083");
        String admissionDb = System.getProperty("admission-db", "gantry_admission");
        String team = "bench";
        String queue = "bench-" + System.currentTimeMillis() / 1000;

        String admin = mint("bench-admin", "--admin");
        expect(send(admin, "POST", inventory + "/v1/cluster:apply", cluster(nodes), "application/json"), 200, "cluster:apply");
        expect(send(admin, "PUT", quota + "/v1/queues/" + queue,
                "{\"members\": {\"teams\": [\"" + team + "\"]}}", "application/json"), 200, "queue " + queue);
        List<String> tokens = new ArrayList<>();
        for (int u = 0; u < users; u++) {
            tokens.add(mint("bench-user-" + u, "--team", team));
        }
        // let quota and placement learn the nodes and the queue before the burst
        Thread.sleep(Long.getLong("settle-ms", 8000));

        Map<String, Long> submitNanos = new ConcurrentHashMap<>();
        List<Long> latencies = Collections.synchronizedList(new ArrayList<>());
        List<String> refused = Collections.synchronizedList(new ArrayList<>());
        String job = """
                {"name": "bench", "queue": "%s", "estimatedRuntimeSeconds": 360000,
                 "taskGroups": [{"name": "worker", "replicas": 1, "gpusPerReplica": 1, "cpuMillis": 1000, "memoryMiB": 4000}]}
                """.formatted(queue);
        long start = System.nanoTime();
        Instant startedAt = Instant.now();
        try (ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor()) {
            List<Future<?>> all = new ArrayList<>();
            for (String token : tokens) {
                all.add(pool.submit(() -> {
                    for (int i = 0; i < jobsPerUser; i++) {
                        long t0 = System.nanoTime();
                        HttpResponse<String> r = send(token, "POST", admission + "/v1/jobs", job, "application/json");
                        long t1 = System.nanoTime();
                        latencies.add(t1 - t0);
                        Matcher m = ID.matcher(r.body());
                        if (r.statusCode() == 201 && m.find()) {
                            submitNanos.put(m.group(1), t0);
                        } else {
                            refused.add(r.statusCode() + " " + r.body());
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> f : all) {
                f.get();
            }
        }
        double submitSeconds = (System.nanoTime() - start) / 1e9;
        System.out.printf("submitted %d jobs (%d refused) in %.1f s: %.0f/s; submit latency p50 %d ms, p99 %d ms%n",
                submitNanos.size(), refused.size(), submitSeconds, submitNanos.size() / submitSeconds,
                percentile(latencies, 50) / 1_000_000, percentile(latencies, 99) / 1_000_000);
        refused.stream().limit(3).forEach(r -> System.out.println("  refused: " + r));

        // the time admission shows each job PLACED: its updated_at when it became PLACED (no later change
        // touches a job that runs for 100 h), against the moment its submission was sent
        long deadline = System.nanoTime() + Duration.ofSeconds(Long.getLong("timeout-seconds", 300)).toNanos();
        Map<String, Instant> placedAt = Map.of();
        while (System.nanoTime() < deadline) {
            placedAt = placed(admissionDb, queue);
            if (placedAt.size() >= submitNanos.size()) {
                break;
            }
            Thread.sleep(500);
        }
        List<Long> toPlaced = new ArrayList<>();
        Instant last = startedAt;
        for (var e : placedAt.entrySet()) {
            Long sent = submitNanos.get(e.getKey());
            if (sent == null) {
                continue;
            }
            Instant sentAt = startedAt.plusNanos(sent - start);
            toPlaced.add(Math.max(0, Duration.between(sentAt, e.getValue()).toMillis()));
            last = e.getValue().isAfter(last) ? e.getValue() : last;
        }
        System.out.printf("placed %d of %d; submit-to-PLACED p50 %d ms, p99 %d ms, max %d ms; last placed %.1f s after the first"
                + " submission%n", toPlaced.size(), submitNanos.size(), percentile(toPlaced, 50), percentile(toPlaced, 99),
                toPlaced.isEmpty() ? 0 : Collections.max(toPlaced), Duration.between(startedAt, last).toMillis() / 1000.0);

        printBound(System.getProperty("placement-db", "gantry_placement"), submitNanos, start, startedAt);
        printStages(admissionDb, System.getProperty("placement-db", "gantry_placement"), submitNanos, start, startedAt);

        if (!Boolean.getBoolean("keep")) {
            try (ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor()) {
                for (String id : submitNanos.keySet()) {
                    pool.submit(() -> send(admin, "DELETE", admission + "/v1/jobs/" + id, null, null));
                }
            }
            System.out.println("cancelled the run's jobs");
        }
    }

    /** Submit-to-bound: the first allocation placement wrote for each job (the GPUs are the job's from then). */
    private static void printBound(String placementDb, Map<String, Long> submitNanos, long start, Instant startedAt) throws Exception {
        Map<String, Instant> boundAt = firstTimes(placementDb,
                "select job_id::text, min(allocated_at) from allocation where job_id = any(?::uuid[]) group by job_id", submitNanos);
        List<Long> toBound = new ArrayList<>();
        Instant last = startedAt;
        for (var e : boundAt.entrySet()) {
            Instant sentAt = startedAt.plusNanos(submitNanos.get(e.getKey()) - start);
            toBound.add(Math.max(0, Duration.between(sentAt, e.getValue()).toMillis()));
            last = e.getValue().isAfter(last) ? e.getValue() : last;
        }
        System.out.printf("bound %d of %d; submit-to-bound p50 %d ms, p99 %d ms; last bound %.1f s after the first submission%n",
                toBound.size(), submitNanos.size(), percentile(toBound, 50), percentile(toBound, 99),
                Duration.between(startedAt, last).toMillis() / 1000.0);
    }

    /**
     * Where the time goes, step by step, from the rows each service writes on the way: admission's
     * job and outbox rows (stored, published), placement's received time (kept on the pending row,
     * gone once bound, so read from the allocation's job), the first allocation, placement's outbox.
     */
    private static void printStages(String admissionDb, String placementDb, Map<String, Long> submitNanos, long start,
            Instant startedAt) throws Exception {
        Map<String, Instant> stored = firstTimes(admissionDb,
                "select id::text, submitted_at from job where id = any(?::uuid[])", submitNanos);
        Map<String, Instant> published = firstTimes(admissionDb, "select subject_id, min(published_at) from outbox_event"
                + " where subject = 'jobs.queued' and subject_id = any(?) group by subject_id", submitNanos);
        Map<String, Instant> bound = firstTimes(placementDb,
                "select job_id::text, min(allocated_at) from allocation where job_id = any(?::uuid[]) group by job_id", submitNanos);
        Map<String, Instant> boundPublished = firstTimes(placementDb, "select subject_id, min(published_at) from outbox_event"
                + " where subject = 'placements.bound' and subject_id = any(?) group by subject_id", submitNanos);
        Map<String, Instant> sent = new java.util.HashMap<>();
        submitNanos.forEach((id, nanos) -> sent.put(id, startedAt.plusNanos(nanos - start)));
        System.out.println("step (p50 / p99 ms): ");
        stage("  submit -> stored (admission)", sent, stored);
        stage("  stored -> published (admission's relay)", stored, published);
        stage("  published -> bound (placement's consumer, window or fast path)", published, bound);
        stage("  bound -> published (placement's relay)", bound, boundPublished);
    }

    private static void stage(String name, Map<String, Instant> from, Map<String, Instant> to) {
        List<Long> millis = new ArrayList<>();
        for (var e : to.entrySet()) {
            Instant begin = from.get(e.getKey());
            if (begin != null && e.getValue() != null) {
                millis.add(Math.max(0, Duration.between(begin, e.getValue()).toMillis()));
            }
        }
        System.out.printf("%s: %d / %d (%d jobs)%n", name, percentile(millis, 50), percentile(millis, 99), millis.size());
    }

    /** id -> time, from a query taking the run's job ids as its one array parameter. */
    private static Map<String, Instant> firstTimes(String database, String sql, Map<String, Long> jobs) throws Exception {
        Map<String, Instant> times = new java.util.HashMap<>();
        try (Connection c = DriverManager.getConnection("jdbc:postgresql://127.0.0.1:5432/" + database, "gantry", "gantry");
                var s = c.prepareStatement(sql)) {
            s.setArray(1, c.createArrayOf("text", jobs.keySet().toArray()));
            try (ResultSet r = s.executeQuery()) {
                while (r.next()) {
                    Timestamp t = r.getTimestamp(2);
                    if (t != null) {
                        times.put(r.getString(1), t.toInstant());
                    }
                }
            }
        }
        return times;
    }

    /** Jobs of the queue that admission shows PLACED (or later), with the time of that change. */
    private static Map<String, Instant> placed(String database, String queue) throws Exception {
        Map<String, Instant> placed = new java.util.HashMap<>();
        try (Connection c = DriverManager.getConnection("jdbc:postgresql://127.0.0.1:5432/" + database, "gantry", "gantry");
                var s = c.prepareStatement("select id, updated_at from job where queue = ? and state in ('PLACED', 'RUNNING')")) {
            s.setString(1, queue);
            try (ResultSet r = s.executeQuery()) {
                while (r.next()) {
                    Timestamp t = r.getTimestamp(2);
                    placed.put(r.getString(1), t.toInstant());
                }
            }
        }
        return placed;
    }

    /** 8-GPU A100 nodes, 20 to a leaf. */
    private static String cluster(int nodes) {
        StringBuilder json = new StringBuilder("{\"nodes\": [");
        for (int i = 0; i < nodes; i++) {
            json.append(i == 0 ? "" : ",").append("""
                    {"name": "bench-%03d", "gpuModel": "A100-SXM4-80GB", "gpus": 8, "nvlinkIslands": [[0,1,2,3,4,5,6,7]],
                     "cpuMillis": 224000, "memoryMiB": 1900000,
                     "topology": {"zone": "z1", "spine": "sp1", "leaf": "lf-%02d"}, "ibFabric": "ib-a"}
                    """.formatted(i, i / 20));
        }
        return json.append("]}").toString();
    }

    private static HttpResponse<String> send(String token, String method, String url, String body, String type) {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(60))
                .header("Authorization", "Bearer " + token)
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
        if (type != null) {
            request.header("Content-Type", type);
        }
        try {
            return HTTP.send(request.build(), HttpResponse.BodyHandlers.ofString());
        } catch (IOException | InterruptedException e) {
            throw new IllegalStateException(method + " " + url + ": " + e, e);
        }
    }

    private static void expect(HttpResponse<String> response, int status, String what) {
        if (response.statusCode() != status && !(status == 200 && response.statusCode() == 201)) {
            throw new IllegalStateException(what + ": HTTP " + response.statusCode() + " " + response.body());
        }
    }

    /** A token from {@code bin/gantry token}, signed with the instance's development key. */
    private static String mint(String user, String... options) throws Exception {
        // exec:java runs in the directory mvn was started from (the repository root); tests run in the module
        Path root = Path.of(System.getProperty("gantry.root", Files.exists(Path.of("bin/gantry")) ? "." : "..")).toAbsolutePath();
        List<String> command = new ArrayList<>(List.of(root.resolve("bin/gantry").toString(), "token", user));
        command.addAll(List.of(options));
        Process process = new ProcessBuilder(command).directory(root.toFile()).start();
        String token = new String(process.getInputStream().readAllBytes()).trim();
        if (process.waitFor() != 0) {
            throw new IllegalStateException("bin/gantry token failed: " + new String(process.getErrorStream().readAllBytes()));
        }
        return token;
    }

    private static long percentile(List<Long> values, int p) {
        if (values.isEmpty()) {
            return 0;
        }
        List<Long> sorted = new ArrayList<>(values);
        Collections.sort(sorted);
        return sorted.get(Math.min(sorted.size() - 1, (int) Math.ceil(p / 100.0 * sorted.size()) - 1));
    }

    private static String env(String name, String fallback) {
        String value = System.getenv(name);
        return value == null || value.isBlank() ? fallback : value;
    }
}
