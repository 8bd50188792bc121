package dev.gantry.e2e;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.restassured.http.ContentType;
import io.restassured.path.json.JsonPath;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code bin/gantry submit | jobs | cancel | queues | nodes} run as processes, the way users run
 * them, against the four packaged services: their tables, their JSON and their exit codes.
 */
@ExtendWith(RunningGantry.class)
class CliIT {

    private static final Pattern SUBMITTED = Pattern.compile(
            "submitted job ([0-9a-f-]{36}) \\((.+), queue (\\S+), (\\d+) GPUs\\): ([A-Z]+)");

    @TempDir
    Path dir;

    /** Two 8-GPU nodes on two leaves, and the vision team's queue capped at 16 GPUs. */
    @BeforeAll
    static void cluster() {
        given().baseUri(RunningGantry.url("node-inventory-service")).auth().oauth2(RunningGantry.adminToken()).contentType(ContentType.JSON)
                .body("{\"nodes\": [" + node("cli-dgx-01", "A100-SXM4-80GB", "lf1") + ", " + node("cli-v100-01", "V100-PCIE-32GB", "lf2") + "]}")
                .when().post("/v1/cluster:apply")
                .then().statusCode(200);
        given().baseUri(RunningGantry.url("quota-service")).auth().oauth2(RunningGantry.adminToken()).contentType(ContentType.JSON)
                .body("{\"capability\": {\"gpus\": 16}, \"guarantee\": {\"gpus\": 4}, \"members\": {\"teams\": [\"vision\"]},"
                        + " \"limits\": {\"maxPriority\": 100}}")
                .when().put("/v1/queues/cli-normal")
                .then().statusCode(200);
    }

    private static String node(String name, String model, String leaf) {
        return """
                {"name": "%s", "gpuModel": "%s", "gpus": 8, "nvlinkIslands": [[0,1,2,3,4,5,6,7]], "cpuMillis": 128000,
                 "memoryMiB": 1000000, "topology": {"zone": "z1", "spine": "sp1", "leaf": "%s"}, "schedulable": true}
                """.formatted(name, model, leaf);
    }

    @Test
    void queuesShowsTheQueueAsATableAndAsJson() {
        Result table = gantry("alice", "queues");
        assertThat(table.exit()).as(table.err()).isZero();
        assertThat(table.lines().get(0).split("\\s+"))
                .containsExactly("NAME", "PARENT", "WEIGHT", "STATE", "GUARANTEE", "CAPABILITY", "DESERVED", "ALLOCATED", "PENDING");
        // name, no parent, weight 1, open, guarantee 4, capability 16, then fair-share figures
        assertThat(table.row("cli-normal")).startsWith("cli-normal", "-", "1", "OPEN", "4", "16").hasSize(9);

        Result json = gantry("alice", "queues", "--json");
        assertThat(json.exit()).isZero();
        JsonPath parsed = JsonPath.from(json.out());
        assertThat(parsed.getList("name", String.class)).contains("cli-normal");
        assertThat(parsed.getInt("find { it.name == 'cli-normal' }.capability.gpus")).isEqualTo(16);
        assertThat(parsed.getString("find { it.name == 'cli-normal' }.status.queue")).isEqualTo("cli-normal");
    }

    @Test
    void nodesShowsModelsLeavesAndStates() {
        Result table = gantry("alice", "nodes");
        assertThat(table.exit()).as(table.err()).isZero();
        assertThat(table.lines().get(0).split("\\s+")).containsExactly("NAME", "MODEL", "GPUS", "FREE", "LEAF", "STATE", "SOURCE", "MIG");
        assertThat(table.row("cli-dgx-01")).containsExactly("cli-dgx-01", "A100-SXM4-80GB", "8", table.row("cli-dgx-01").get(3), "lf1", "READY",
                "file", "-");
        assertThat(table.row("cli-v100-01")).element(4).isEqualTo("lf2");

        Result filtered = gantry("alice", "nodes", "--model", "V100-PCIE-32GB", "--json");
        assertThat(filtered.exit()).isZero();
        assertThat(JsonPath.from(filtered.out()).getList("name", String.class)).containsExactly("cli-v100-01");
    }

    @Test
    void submittedJobIsListedPlacedAndCancelled() throws IOException {
        Path file = dir.resolve("train.json");
        // a long estimate, so the standalone executor keeps it running until it is cancelled
        Files.writeString(file, """
                {"name": "cli-train", "queue": "cli-normal", "priority": 10, "estimatedRuntimeSeconds": 1000000,
                 "taskGroups": [{"name": "worker", "replicas": 1, "gpusPerReplica": 4}]}
                """);
        Result submit = gantry("alice", "submit", file.toString());
        assertThat(submit.exit()).as(submit.err()).isZero();
        Matcher m = SUBMITTED.matcher(submit.out().trim());
        assertThat(m.matches()).as(submit.out()).isTrue();
        String id = m.group(1);
        assertThat(m.group(2)).isEqualTo("cli-train");
        assertThat(m.group(4)).isEqualTo("4");

        // alice's own list has it, with her as owner; bob's own list (same team) has not, his team view has
        Result mine = gantry("alice", "jobs");
        assertThat(mine.exit()).as(mine.err()).isZero();
        assertThat(mine.lines().get(0).split("\\s+")).containsExactly("ID", "NAME", "QUEUE", "OWNER", "STATE", "GPUS", "WAIT", "START",
                "NODELIST", "EXIT", "REASON");
        assertThat(mine.row(id)).startsWith(id, "cli-train", "cli-normal", "alice");
        assertThat(mine.row(id).get(5)).isEqualTo("4");
        assertThat(ok(gantry("bob", "jobs")).out()).startsWith("ID ").doesNotContain(id);
        assertThat(ok(gantry("bob", "jobs", "--team", "vision")).row(id)).element(3).isEqualTo("alice");
        assertThat(ok(gantry("bob", "jobs", "--all")).row(id)).element(3).isEqualTo("alice");
        assertThat(ok(gantry("bob", "jobs", "--team", "speech")).out()).doesNotContain(id);

        // placement gives it 4 GPUs on one node: nodes shows 4 free there and 8 on the other
        // (awaited: the short jobs of the other tests may hold GPUs for a moment)
        await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(500)).until(() ->
                List.of("PLACED", "RUNNING").contains(job(id).getString("state")));
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(500)).until(() -> freeGpus().equals(List.of("4", "8")));
        // where it runs: its node with the 4 GPU indices (NODELIST), and each task in 'jobs show'
        String nodeList = ok(gantry("alice", "jobs")).row(id).get(8);
        assertThat(nodeList).matches("cli-(dgx|v100)-01\\[[0-9,-]+\\]");
        assertThat(ok(gantry("alice", "jobs")).row(id).get(7)).as("a running job has no START").isEqualTo("-");
        assertThat(ok(gantry("alice", "jobs", "show", id)).out()).containsPattern("attempts:\\s+1\\n").containsPattern("worker-0\\s+cli-");

        // a whole node of the same model waits for it: START is when it ends (as squeue --start), 'jobs show' says why
        Path waiting = dir.resolve("wait.json");
        Files.writeString(waiting, """
                {"name": "cli-wait", "queue": "cli-normal", "estimatedRuntimeSeconds": 1000, "gpuModels": ["%s"],
                 "taskGroups": [{"name": "worker", "replicas": 1, "gpusPerReplica": 8}]}
                """.formatted(nodeList.startsWith("cli-dgx") ? "A100-SXM4-80GB" : "V100-PCIE-32GB"));
        Matcher w = SUBMITTED.matcher(ok(gantry("alice", "submit", waiting.toString())).out().trim());
        assertThat(w.matches()).isTrue();
        String waitId = w.group(1);
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(500)).until(() ->
                ok(gantry("alice", "jobs")).row(waitId).get(7).matches("\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ"));
        assertThat(ok(gantry("alice", "jobs", "show", waitId)).out())
                .containsPattern("expected start:\\s+\\S+Z \\(in [0-9hms]+; (reserved: )?after \\d+ jobs? ends?\\)")
                .containsPattern("waits for:\\s+" + id);
        ok(gantry("alice", "cancel", waitId));

        Result cancel = gantry("alice", "cancel", id);
        assertThat(cancel.exit()).as(cancel.err()).isZero();
        assertThat(cancel.out().trim()).isEqualTo("job " + id + " (cli-train): CANCELLED");
        Result cancelled = gantry("alice", "jobs", "--state", "cancelled");
        assertThat(cancelled.row(id)).element(4).isEqualTo("CANCELLED");
        // its GPUs are free again
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(500)).until(() -> freeGpus().equals(List.of("8", "8")));
    }

    @Test
    void volcanoYamlIsSubmittedOncePerIdempotencyKey() throws IOException {
        Path file = dir.resolve("tf-dist-train.yaml");
        Files.writeString(file, """
                apiVersion: batch.volcano.sh/v1alpha1
                kind: Job
                metadata:
                  name: cli-tf-dist-train
                spec:
                  minAvailable: 2
                  schedulerName: volcano
                  queue: cli-normal
                  tasks:
                    - name: ps
                      replicas: 1
                      template:
                        spec:
                          containers:
                            - name: tensorflow
                              image: tensorflow/tensorflow:2.16.1-gpu
                              resources:
                                limits: {nvidia.com/gpu: 1, cpu: "4", memory: 16Gi}
                    - name: worker
                      replicas: 1
                      template:
                        spec:
                          containers:
                            - name: tensorflow
                              image: tensorflow/tensorflow:2.16.1-gpu
                              resources:
                                limits: {nvidia.com/gpu: 2, cpu: 8000m, memory: 32Gi}
                """);
        Result first = gantry("alice", "submit", file.toString(), "--idempotency-key", "cli-once", "--json");
        assertThat(first.exit()).as(first.err()).isZero();
        JsonPath job = JsonPath.from(first.out());
        assertThat(job.getString("name")).isEqualTo("cli-tf-dist-train");
        assertThat(job.getInt("totalGpus")).isEqualTo(3);
        assertThat(job.getString("owner")).isEqualTo("alice");

        Result again = gantry("alice", "submit", file.toString(), "--idempotency-key", "cli-once");
        assertThat(again.exit()).as(again.err()).isZero();
        assertThat(again.out().trim()).startsWith("job " + job.getString("id") + " was already submitted with this idempotency key: ");

        Result quiet = gantry("alice", "submit", file.toString(), "-q");
        assertThat(quiet.exit()).isZero();
        assertThat(quiet.out().trim()).matches("[0-9a-f-]{36}").isNotEqualTo(job.getString("id"));

        // both run 72 s once placed: cancelled, so they hold no GPU another test of this class counts
        for (String id : List.of(job.getString("id"), quiet.out().trim())) {
            Result cancel = gantry("alice", "cancel", id);
            assertThat(cancel.exit()).as(cancel.err()).isZero();
        }
    }

    @Test
    void badUsageAndBadFilesExitTwoWithOneLine() throws IOException {
        Path broken = dir.resolve("broken.json");
        Files.writeString(broken, "{\"name\": ");
        for (Result r : List.of(
                gantry("alice", "submit", broken.toString()),
                gantry("alice", "submit", dir.resolve("missing.json").toString()),
                gantry("alice", "submit"),
                gantry("alice", "jobs", "--state", "SLEEPING"),
                gantry("alice", "cancel", "not-a-job"),
                gantry("alice", "nodes", "--colour"),
                // over the maximum token lifetime (GANTRY_TOKEN_MAX_HOURS, 12 h): refused, no token printed
                gantry("alice", "token", "alice", "--team", "vision", "--hours", "13"),
                gantry("alice", "token", "node-1", "--agent", "node-1", "--admin"))) {
            assertThat(r.exit()).as(r.err()).isEqualTo(2);
            assertThat(r.out()).isEmpty();
            assertThat(r.err().strip().lines()).as(r.err()).hasSize(1).allMatch(l -> l.startsWith("gantry"));
        }
        assertThat(gantry("alice", "submit", broken.toString()).err()).contains(broken.toString(), "not valid JSON");
    }

    @Test
    void refusalsPrintTheProblemAndExitOne() throws IOException {
        Path tooBig = dir.resolve("too-big.json");
        Files.writeString(tooBig, """
                {"name": "cli-too-big", "queue": "cli-normal", "taskGroups": [{"name": "worker", "replicas": 4, "gpusPerReplica": 8}]}
                """);
        Result refused = gantry("alice", "submit", tooBig.toString());
        assertThat(refused.exit()).isEqualTo(1);
        assertThat(refused.out()).isEmpty();
        assertThat(refused.err()).startsWith("gantry: admission-service refused it (422 ").contains("ExceedsQueueCapability");

        // a field the API does not know: the problem names it on a line of its own
        Path unknownField = dir.resolve("unknown-field.json");
        Files.writeString(unknownField, """
                {"name": "cli-x", "queue": "cli-normal", "colour": "red", "taskGroups": [{"name": "w", "replicas": 1, "gpusPerReplica": 1}]}
                """);
        Result bad = gantry("alice", "submit", unknownField.toString());
        assertThat(bad.exit()).isEqualTo(1);
        assertThat(bad.err()).startsWith("gantry: admission-service refused it (400 ").contains("colour");

        Result unknownJob = gantry("alice", "cancel", "00000000-0000-0000-0000-000000000000");
        assertThat(unknownJob.exit()).isEqualTo(1);
        assertThat(unknownJob.err()).contains("404");
    }

    @Test
    void tokensCarryTheAudienceAndTheRoleClaimNotAnAdminGroup() {
        Map<String, Object> admin = claims(ok(gantry("alice", "token", "root", "--admin")).out().trim());
        assertThat(admin).containsEntry("iss", "gantry").containsEntry("aud", "gantry").containsEntry("gantry_role", "admin")
                .containsEntry("groups", List.of());
        assertThat(((Number) admin.get("exp")).longValue() - ((Number) admin.get("iat")).longValue()).isEqualTo(12 * 3600);
        Map<String, Object> agent = claims(ok(gantry("alice", "token", "agent-1", "--agent", "dgx-01", "--hours", "1")).out().trim());
        assertThat(agent).containsEntry("gantry_role", "agent").containsEntry("gantry_node", "dgx-01");
        Map<String, Object> user = claims(ok(gantry("alice", "token", "alice", "--team", "vision", "--team", "admin")).out().trim());
        assertThat(user).doesNotContainKey("gantry_role").containsEntry("groups", List.of("vision", "admin"));
    }

    @Test
    void readsSendTheCallersTokenAndARefusedOneIsAProblem() {
        Result forged = gantry(Map.of("GANTRY_TOKEN", "not-a-token"), "alice", "queues");
        assertThat(forged.exit()).isEqualTo(1);
        assertThat(forged.err()).startsWith("gantry: quota-service refused it (401 Unauthorized)");
        Result agent = gantry(Map.of("GANTRY_TOKEN", RunningGantry.agentToken("cli-dgx-01")), "alice", "queues");
        assertThat(agent.exit()).isEqualTo(1);
        assertThat(agent.err()).startsWith("gantry: quota-service refused it (403 Forbidden)");
        // the node agent may read its own node, not the list
        Result nodes = gantry(Map.of("GANTRY_TOKEN", RunningGantry.agentToken("cli-dgx-01")), "alice", "nodes");
        assertThat(nodes.exit()).isEqualTo(1);
        assertThat(nodes.err()).startsWith("gantry: node-inventory-service refused it (403 Forbidden)");
    }

    @Test
    void upBindsEveryServiceToLoopbackUnlessToldOtherwise() throws Exception {
        List<String> planned = ok(gantry("alice", "up", "--dry-run")).lines();
        // after the four services, the node agents of a one-machine cluster: this machine's GPUs, or two simulated 8-GPU nodes
        List<String> agents = planned.stream().filter(line -> line.startsWith("agent ")).toList();
        if (nvidiaSmiWorks()) {
            assertThat(agents).hasSize(1).allSatisfy(line -> assertThat(line).doesNotContain("--simulate"));
        } else {
            System.out.println("CliIT: no nvidia-smi here, so up plans simulated nodes");
            assertThat(agents).hasSize(2).allSatisfy(line -> assertThat(line)
                    .matches("agent ([a-z0-9-]+-sim-[01]): bin/gantry agent --node \\1 --simulate 8:A100-SXM4-80GB"));
        }
        assertThat(ok(gantry(Map.of("GANTRY_UP_AGENTS", "0"), "alice", "up", "--dry-run")).lines()).noneMatch(line -> line.startsWith("agent "));
        assertThat(ok(gantry(Map.of("GANTRY_UP_SIMULATE", "3x4:H100"), "alice", "up", "--dry-run")).lines())
                .filteredOn(line -> line.startsWith("agent ")).hasSize(3).allMatch(line -> line.endsWith(" --simulate 4:H100"));
        Result badShape = gantry(Map.of("GANTRY_UP_SIMULATE", "lots"), "alice", "up", "--dry-run");
        assertThat(badShape.exit()).isEqualTo(2);
        assertThat(badShape.err().strip().lines()).hasSize(1).allMatch(line -> line.contains("GANTRY_UP_SIMULATE must be KxN:MODEL"));
        List<String> loopback = planned.stream().filter(line -> !line.startsWith("agent ")).toList();
        assertThat(loopback).hasSize(4).allSatisfy(line -> assertThat(line)
                .contains(" -Dquarkus.http.host=127.0.0.1 ").contains(" -Dgantry.jwt.public-key=").contains(" -Dgantry.jwt.audience=gantry ")
                .contains(" -Dgantry.jwt.max-lifetime-seconds=43200 "));
        assertThat(loopback.getFirst()).startsWith("admission-service: ").contains(" -Dgantry.jwt.private-key=");
        // database credentials are always passed (the packaged services have no default); each service connects to the
        // broker as its own user; the line names the broker password's file, never the password
        assertThat(loopback).extracting(line -> line.substring(line.indexOf(": ") + 2, line.indexOf(" java ")))
                .containsExactly(List.of("admission", "quota", "inventory", "placement").stream()
                        .map(user -> "GANTRY_DB_USER=gantry GANTRY_DB_PASSWORD=gantry GANTRY_NATS_USERNAME=" + user + " GANTRY_NATS_PASSWORD=$(cat "
                                + Path.of(System.getProperty("gantry.root", "..")).toAbsolutePath().normalize()
                                + "/.gantry/nats/credentials/" + user + ")").toArray(String[]::new));
        assertThat(loopback.subList(1, 4)).noneMatch(line -> line.contains("private-key"));
        // a database password from the environment is shown by name, never by value
        List<String> ownRole = ok(gantry(Map.of("GANTRY_DB_USER", "svc", "GANTRY_DB_PASSWORD", "s3cret-pw", "GANTRY_UP_AGENTS", "0"), "alice", "up", "--dry-run")).lines();
        assertThat(ownRole).hasSize(4).allSatisfy(line -> assertThat(line)
                .contains(": GANTRY_DB_USER=svc GANTRY_DB_PASSWORD=\"$GANTRY_DB_PASSWORD\" ").doesNotContain("s3cret-pw"));
        List<String> everywhere = ok(gantry(Map.of("GANTRY_BIND_HOST", "0.0.0.0", "GANTRY_UP_AGENTS", "0"), "alice", "up", "--dry-run")).lines();
        assertThat(everywhere).hasSize(4).allMatch(line -> line.contains(" -Dquarkus.http.host=0.0.0.0 "));
        // the services' JVM options: GANTRY_JVM_OPTS as given; else, on a machine of 2 cores or fewer, the JIT's first tier
        // only for all but placement (whose solver runs hot loops for the service's life), and for placement's plumbing only
        assertThat(ok(gantry(Map.of("GANTRY_JVM_OPTS", "-Xmx1g", "GANTRY_UP_AGENTS", "0"), "alice", "up", "--dry-run")).lines())
                .hasSize(4).allMatch(line -> line.contains(" java -Xmx1g -Dquarkus.http.port="));
        boolean small = Runtime.getRuntime().availableProcessors() <= 2;
        assertThat(loopback.subList(0, 3)).allMatch(line -> line.contains(" -XX:TieredStopAtLevel=1 ") == small);
        assertThat(loopback.get(3)).startsWith("placement-service: ").doesNotContain("TieredStopAtLevel");
        Path root = Path.of(System.getProperty("gantry.root", "..")).toRealPath();
        String directives = " -XX:CompilerDirectivesFile=" + root.resolve("bin/lib/placement-jit.json") + " ";
        assertThat(loopback.get(3).contains(directives)).isEqualTo(small);
        // the file is one this JVM takes (a syntax error there would stop placement from starting), and leaves the solver alone
        Path file = root.resolve("bin/lib/placement-jit.json");
        assertThat(Files.readString(file)).contains("dev/gantry/kit/*.*").doesNotContain("dev/gantry/placement/engine", "ai/timefold");
        Process java = new ProcessBuilder(ProcessHandle.current().info().command().orElseThrow(), "-XX:+UnlockDiagnosticVMOptions",
                "-XX:CompilerDirectivesFile=" + file, "-version").redirectErrorStream(true).start();
        String javaSaid = new String(java.getInputStream().readAllBytes());
        assertThat(java.waitFor()).as(javaSaid).isZero();
        assertThat(javaSaid).contains("1 compiler directives added");
        Result bad = gantry("alice", "up", "--everywhere");
        assertThat(bad.exit()).isEqualTo(2);
        assertThat(bad.err().strip().lines()).hasSize(1);
    }

    private static boolean nvidiaSmiWorks() {
        try {
            return new ProcessBuilder("nvidia-smi", "-L").redirectErrorStream(true).start().waitFor() == 0;
        } catch (IOException | InterruptedException e) {
            return false;
        }
    }

    /** The payload of a JWT, read without verifying it. */
    private static Map<String, Object> claims(String token) {
        String payload = new String(java.util.Base64.getUrlDecoder().decode(token.split("\\.")[1]), StandardCharsets.UTF_8);
        return JsonPath.from(payload).getMap("");
    }

    @Test
    void anUnreachableServiceExitsOneNamingItsUrl() {
        Result r = gantry(Map.of("GANTRY_QUOTA_URL", "http://127.0.0.1:1"), "alice", "queues");
        assertThat(r.exit()).isEqualTo(1);
        assertThat(r.err().strip()).isEqualTo("gantry: cannot reach quota-service at http://127.0.0.1:1: Connection refused");
        Result jobs = gantry(Map.of("GANTRY_ADMISSION_URL", "http://127.0.0.1:1"), "alice", "jobs");
        assertThat(jobs.exit()).isEqualTo(1);
        assertThat(jobs.err()).contains("admission-service at http://127.0.0.1:1");
    }

    // ------------------------------------------------------------------------------------------ helpers

    private static Result ok(Result r) {
        assertThat(r.exit()).as(r.err()).isZero();
        return r;
    }

    /** The FREE cells of both nodes, sorted. */
    private static List<String> freeGpus() {
        Result nodes = gantry("alice", "nodes");
        assertThat(nodes.exit()).as(nodes.err()).isZero();
        return java.util.stream.Stream.of(nodes.row("cli-dgx-01").get(3), nodes.row("cli-v100-01").get(3)).sorted().toList();
    }

    private static JsonPath job(String id) {
        Result r = gantry("alice", "jobs", "--json");
        assertThat(r.exit()).as(r.err()).isZero();
        return JsonPath.from(r.out()).setRootPath("find { it.id == '" + id + "' }");
    }

    /** What a run printed and how it ended. */
    record Result(int exit, String out, String err) {
        List<String> lines() {
            return out.lines().toList();
        }

        /** The cells of the row whose first cell is {@code key} (cells are separated by two or more spaces, or one in the header). */
        List<String> row(String key) {
            return lines().stream().skip(1)
                    .map(l -> Arrays.asList(l.trim().split("\\s{2,}")))
                    .filter(cells -> cells.get(0).equals(key))
                    .findFirst()
                    .orElseThrow(() -> new AssertionError("no row " + key + " in:\n" + out + err));
        }
    }

    static Result gantry(String user, String... args) {
        return gantry(Map.of(), user, args);
    }

    /** bin/gantry as a user of team vision, pointed at the e2e services; a token is minted with the test key. */
    static Result gantry(Map<String, String> env, String user, String... args) {
        Path root = Path.of(System.getProperty("gantry.root", ".."));
        List<String> command = new ArrayList<>(List.of(root.resolve("bin/gantry").toString()));
        command.addAll(List.of(args));
        ProcessBuilder builder = new ProcessBuilder(command);
        Map<String, String> environment = builder.environment();
        environment.remove("GANTRY_TOKEN");
        // up --dry-run prints the database user; the tests expect the development default unless they set one
        environment.remove("GANTRY_DB_USER");
        environment.remove("GANTRY_DB_PASSWORD");
        environment.put("USER", user);
        environment.put("GANTRY_TEAMS", "vision");
        environment.put("GANTRY_JWT_DIR", RunningGantry.jwtDir().toString());
        environment.put("GANTRY_ADMISSION_URL", RunningGantry.url("admission-service"));
        environment.put("GANTRY_QUOTA_URL", RunningGantry.url("quota-service"));
        environment.put("GANTRY_NODE_INVENTORY_URL", RunningGantry.url("node-inventory-service"));
        environment.put("GANTRY_PLACEMENT_URL", RunningGantry.url("placement-service"));
        environment.putAll(env);
        try {
            Path out = Files.createTempFile("gantry-cli", ".out");
            Path err = Files.createTempFile("gantry-cli", ".err");
            Process process = builder.redirectOutput(out.toFile()).redirectError(err.toFile()).start();
            if (!process.waitFor(60, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                throw new AssertionError("bin/gantry " + String.join(" ", args) + " did not finish in 60 s");
            }
            Result result = new Result(process.exitValue(), Files.readString(out, StandardCharsets.UTF_8),
                    Files.readString(err, StandardCharsets.UTF_8));
            Files.delete(out);
            Files.delete(err);
            return result;
        } catch (IOException e) {
            throw new IllegalStateException("cannot run bin/gantry", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
