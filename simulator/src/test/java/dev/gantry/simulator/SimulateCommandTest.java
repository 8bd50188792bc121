package dev.gantry.simulator;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.gantry.simulator.cli.SimulateCommand;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The command line: exit codes, one-line errors, and the files a run writes. */
class SimulateCommandTest {
    @TempDir
    Path dir;
    Path trace;
    Path cluster;
    final ByteArrayOutputStream out = new ByteArrayOutputStream();
    final ByteArrayOutputStream err = new ByteArrayOutputStream();

    @BeforeEach
    void files() throws IOException {
        trace = TestClusters.write(dir, "trace.csv", """
                name,submit,duration,gpus,queue
                a,0,1000,4,team-a
                b,5,100,8,team-b
                c,6,5000,2,team-a
                d,7,500,2,team-b
                e,3000,60,16,team-a
                """);
        cluster = TestClusters.write(dir, "cluster.json", TestClusters.eightGpuNodes(1, 2).toJson());
    }

    private int run(String... args) {
        return SimulateCommand.run(args, new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8));
    }

    private String errText() {
        return err.toString(StandardCharsets.UTF_8);
    }

    @Test
    void aRunWritesMetricsReportAndSummary() throws IOException {
        Path outDir = dir.resolve("out");
        int code = run("--trace", trace.toString(), "--format", "gantry-csv", "--cluster", cluster.toString(), "--policies", "fifo,greedy,backfill,timefold",
                "--window", "10s", "--time-limit", "100ms", "--out", outDir.toString(), "--quiet");
        assertThat(code).as(errText()).isZero();
        String stdout = out.toString(StandardCharsets.UTF_8);
        assertThat(stdout).contains("fifo", "greedy", "backfill", "timefold", "vs fifo", "vs greedy", "bound");
        assertThat(stdout.lines().count()).isLessThan(25); // one screen
        JsonNode m = new ObjectMapper().readTree(outDir.resolve("metrics.json").toFile());
        assertThat(m.get("policies")).hasSize(4);
        for (JsonNode p : m.get("policies")) {
            assertThat(p.get("finished").asInt()).isEqualTo(5);
            assertThat(p.get("jctMean").asDouble()).isGreaterThanOrEqualTo(p.get("jctMeanLowerBound").asDouble());
            assertThat(p.get("makespan").asDouble()).isGreaterThanOrEqualTo(p.get("makespanLowerBound").asDouble());
            JsonNode series = p.get("allocationOverTime").get("percentOfGpus");
            assertThat(series.size()).isPositive();
            series.forEach(v -> assertThat(v.asDouble()).isBetween(0.0, 100.0));
        }
        String html = Files.readString(outDir.resolve("report.html"));
        assertThat(html).contains("<img", "data:image/png;base64,");
        // self-contained: nothing fetched from elsewhere
        assertThat(html).doesNotContain("<script", "http://", "https://");
    }

    @Test
    void reclaimTowardTheFairShareIsTheServicesOption() throws IOException {
        // team-a fills both 8-GPU nodes for a long time; team-b's 8-GPU job arrives: with the option it reclaims half
        Path fill = TestClusters.write(dir, "fill.csv", """
                name,submit,duration,gpus,queue
                a1,0,100000,8,team-a
                a2,0,100000,8,team-a
                b1,10,100,8,team-b
                """);
        int[] preemptions = new int[2];
        for (int on = 0; on < 2; on++) {
            Path o = dir.resolve("fair-" + on);
            List<String> args = new java.util.ArrayList<>(List.of("--trace", fill.toString(), "--format", "gantry-csv", "--cluster",
                    cluster.toString(), "--policies", "timefold", "--window", "10s", "--solver-moves", "2000", "--preemption", "--out",
                    o.toString(), "--quiet"));
            if (on == 1) {
                args.add("--reclaim-toward-fair-share");
            }
            assertThat(run(args.toArray(String[]::new))).as(errText()).isZero();
            JsonNode m = new ObjectMapper().readTree(o.resolve("metrics.json").toFile());
            assertThat(m.get("run").get("reclaimTowardFairShare").asBoolean()).isEqualTo(on == 1);
            preemptions[on] = m.get("policies").get(0).get("preemptions").asInt();
        }
        assertThat(preemptions[0]).as("off: team-b waits for team-a's jobs to end").isZero();
        assertThat(preemptions[1]).as("on: team-b reclaims its fair share").isEqualTo(1);
    }

    @Test
    void makeClusterWritesAClusterTheReplayReads() throws IOException {
        Path philly = TestClusters.write(dir, "philly.csv", """
                timestamp,duration,num_gpus,gpu_time,cluster
                2017-10-02 00:00:00,86400,8,691200,aa
                2017-10-02 12:00:00,86400,8,691200,bb
                2017-10-03 00:00:00,60,1,60,aa
                """);
        Path c = dir.resolve("philly-cluster.json");
        // slice: the first two jobs, 16 GPU-days submitted over 12 hours = 32 GPUs mean demand; at load 1.0 -> 4 nodes
        assertThat(run("make-cluster", "philly", "--trace", philly.toString(), "--from", "2017-10-02", "--to", "2017-10-03", "--load", "1.0",
                "--out", c.toString())).as(errText()).isZero();
        assertThat(out.toString(StandardCharsets.UTF_8)).contains("4 nodes, 32 GPUs");
        assertThat(run("--trace", philly.toString(), "--format", "philly", "--cluster", c.toString(), "--policies", "fifo", "--from", "2017-10-02",
                "--to", "2017-10-03", "--out", dir.resolve("o").toString(), "--quiet")).as(errText()).isZero();
        JsonNode m = new ObjectMapper().readTree(dir.resolve("o/metrics.json").toFile());
        assertThat(m.get("run").get("jobs").asInt()).isEqualTo(2); // the third job is after --to
    }

    @Test
    void anOpenbRunPrintsThePublishedCurvesBesideGantrys() throws IOException {
        // the shared layout: traces/<trace dir>/pods.csv beside traces/fgd-atc23-expected-results/
        Path traces = Files.createDirectories(dir.resolve("traces/alibaba-gpu-v2023"));
        Path expected = Files.createDirectories(dir.resolve("traces/fgd-atc23-expected-results"));
        Path nodes = TestClusters.write(traces, "nodes.csv", "sn,cpu_milli,memory_mib,gpu,model\nN-0,32000,65536,2,T4\nN-1,32000,65536,0,\n");
        Path pods = TestClusters.write(traces, "openb_pod_list_default.csv",
                "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec\nP-0,1000,1024,1,500,\nP-1,1000,1024,1,1000,T4\n");
        StringBuilder header = new StringBuilder("workload,sc_policy,tune,seed,total_gpus");
        StringBuilder row = new StringBuilder("openb_pod_list_default,06-FGD,1.3,42,2");
        for (int p = 0; p <= 130; p++) {
            header.append(',').append(p);
            row.append(',').append(Math.min(p, 99));
        }
        TestClusters.write(expected, "analysis_allo_discrete.csv", header + "\n" + row + "\n");
        Path c = dir.resolve("openb.json");
        assertThat(run("make-cluster", "openb", "--nodes-csv", nodes.toString(), "--out", c.toString())).as(errText()).isZero();
        assertThat(out.toString(StandardCharsets.UTF_8)).contains("1 nodes, 2 GPUs"); // the CPU-only node is left out
        Path o = dir.resolve("openb-out");
        assertThat(run("--trace", pods.toString(), "--format", "openb", "--cluster", c.toString(), "--policies", "greedy", "--modes",
                "online,batched", "--seeds", "1,2", "--out", o.toString(), "--quiet")).as(errText()).isZero();
        String stdout = out.toString(StandardCharsets.UTF_8);
        assertThat(stdout).contains("gantry greedy online", "gantry greedy batched", "paper 06-FGD");
        JsonNode m = new ObjectMapper().readTree(o.resolve("metrics.json").toFile());
        assertThat(m.get("runs")).hasSize(4);
        assertThat(m.get("publishedFgdAtc23").get("06-FGD").get("allocationAt100").asDouble()).isEqualTo(99.0);
        for (JsonNode r : m.get("runs")) {
            assertThat(r.get("allocationAt130").asDouble()).isBetween(0.0, 100.0);
        }
        assertThat(Files.readString(o.resolve("report.html"))).contains("data:image/png;base64,").doesNotContain("https://");
    }

    @Test
    void openbWithItsTimesComparesNoMovesWithMovesInOneRun() throws IOException {
        // two 8-GPU nodes; from t=100 four long 2-GPU pods leave 4 + 4 GPUs free; an 8-GPU pod arrives at t=1000
        Path nodes = TestClusters.write(dir, "nodes.csv", "sn,cpu_milli,memory_mib,gpu,model\nN-0,96000,393216,8,G2\nN-1,96000,393216,8,G2\n");
        StringBuilder pods = new StringBuilder("name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n");
        for (int i = 0; i < 8; i++) {
            pods.append("P-").append(i).append(",1000,1024,2,1000,,LS,Running,0,").append(i % 2 == 0 ? 100_000 : 100).append(",0\n");
        }
        pods.append("P-wide,8000,16384,8,1000,,LS,Running,1000,2000,1000\n");
        Path trace = TestClusters.write(dir, "timed.csv", pods.toString());
        Path c = dir.resolve("g2.json");
        assertThat(run("make-cluster", "openb", "--nodes-csv", nodes.toString(), "--out", c.toString())).as(errText()).isZero();
        Path o = dir.resolve("timed-out");
        assertThat(run("--trace", trace.toString(), "--format", "openb-timed", "--cluster", c.toString(), "--policies", "timefold",
                "--window", "10s", "--solver-moves", "2000", "--migratable", "0,1", "--move-cost", "300s", "--out", o.toString(), "--quiet"))
                .as(errText()).isZero();
        String stdout = out.toString(StandardCharsets.UTF_8);
        assertThat(stdout).contains("timefold@m0.0", "timefold@m1.0", "l_delay_h");
        JsonNode m = new ObjectMapper().readTree(o.resolve("metrics.json").toFile());
        JsonNode still = m.get("policies").get(0);
        JsonNode moving = m.get("policies").get(1);
        assertThat(still.get("policy").asText()).isEqualTo("timefold@m0.0");
        assertThat(still.get("moves").asInt()).isZero();
        assertThat(still.get("largeJobs").asInt()).isEqualTo(1);
        assertThat(still.get("largeDelayMean").asDouble()).as("without moves the 8-GPU pod waits for a long pod").isGreaterThanOrEqualTo(99_000);
        assertThat(moving.get("moves").asInt()).isEqualTo(2);
        assertThat(moving.get("largeDelayMean").asDouble()).as("two moves place it in its first window").isZero();
    }

    @Test
    void fgdTableRunsEveryPublishedWorkloadAgainstFgdAndResumesWhereItStopped() throws IOException {
        Path traces = Files.createDirectories(dir.resolve("t/alibaba-gpu-v2023"));
        Path expected = Files.createDirectories(dir.resolve("t/fgd-atc23-expected-results"));
        Path nodes = TestClusters.write(traces, "nodes.csv", "sn,cpu_milli,memory_mib,gpu,model\nN-0,32000,65536,2,T4\nN-1,32000,65536,2,T4\n");
        TestClusters.write(traces, "openb_pod_list_default.csv", "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec\nP-0,1000,1024,1,1000,\nP-1,1000,1024,1,1000,\n");
        TestClusters.write(traces, "openb_pod_list_gpushare100.csv", "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec\nP-0,1000,1024,1,500,\nP-1,1000,1024,1,500,\n");
        StringBuilder csv = new StringBuilder("workload,sc_policy,tune,seed,total_gpus");
        for (int p = 0; p <= 130; p++) {
            csv.append(',').append(p);
        }
        csv.append('\n');
        // FGD's published figure at 100%: 40 and 42 on the default workload, 99 and 99 on gpushare100; BestFit rows are ignored
        for (String[] r : new String[][] {{"openb_pod_list_default", "06-FGD", "42", "40"}, {"openb_pod_list_default", "06-FGD", "43", "42"},
                {"openb_pod_list_default", "05-BestFit", "42", "10"}, {"openb_pod_list_gpushare100", "06-FGD", "42", "99"},
                {"openb_pod_list_gpushare100", "06-FGD", "43", "99"}}) {
            csv.append(r[0]).append(',').append(r[1]).append(",1.3,").append(r[2]).append(",4");
            for (int p = 0; p <= 130; p++) {
                csv.append(',').append(p == 100 ? r[3] : "1");
            }
            csv.append('\n');
        }
        TestClusters.write(expected, "analysis_allo_discrete.csv", csv.toString());
        Path c = dir.resolve("openb4.json");
        assertThat(run("make-cluster", "openb", "--nodes-csv", nodes.toString(), "--out", c.toString())).as(errText()).isZero();
        Path o = dir.resolve("table");
        String[] args = {"fgd-table", "--traces", traces.toString(), "--cluster", c.toString(), "--policy", "greedy-frag", "--seeds", "1,2",
            "--out", o.toString()};
        assertThat(run(args)).as(errText()).isZero();
        String table = Files.readString(o.resolve("table.md"));
        assertThat(table).contains("| openb_pod_list_default |", "| openb_pod_list_gpushare100 |", "| 41.00 | 40.00-42.00 |")
                .contains("of 2 workloads").contains("greedy-frag online");
        JsonNode done = new ObjectMapper().readTree(o.resolve("openb_pod_list_default.json").toFile());
        assertThat(done.get("allocationAt100")).hasSize(2);
        // a second run with the same setup reads what is done: the traces may even be gone
        Files.writeString(traces.resolve("openb_pod_list_default.csv"), "not,a,trace\n");
        assertThat(run(args)).as(errText()).isZero();
        assertThat(Files.readString(o.resolve("table.md"))).isEqualTo(table);
        assertThat(run("fgd-table", "--traces", traces.toString(), "--cluster", c.toString(), "--policy", "magic")).isEqualTo(2);
        assertThat(errText()).contains("--policy: unknown policy magic");
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "--format gantry-csv --cluster CLUSTER|--trace is required",
        "--trace TRACE --format parquet --cluster CLUSTER|--format: unknown format parquet",
        "--trace TRACE --format gantry-csv --cluster CLUSTER --policies fifo,magic|--policies: unknown policy magic",
        "--trace TRACE --format gantry-csv --cluster CLUSTER --window soon|--window: bad duration soon",
        "--trace TRACE --format gantry-csv --cluster CLUSTER --time-limit 0ms|--time-limit: time limit must be positive",
        "--trace /no/such/file.csv --format gantry-csv --cluster CLUSTER|--trace: no such file /no/such/file.csv",
        "--trace TRACE --format gantry-csv --cluster CLUSTER --from 2017-13-45|--from: bad time 2017-13-45",
        "--trace TRACE --format gantry-csv --cluster CLUSTER --from 100 --to 50|--to must be after --from",
        "--trace TRACE --format gantry-csv --cluster CLUSTER --bogus|unknown option --bogus",
        "--trace TRACE --format gantry-csv --cluster CLUSTER --window|--window needs a value",
        "--trace CLUSTER --format gantry-csv --cluster CLUSTER|missing column name",
        "--trace TRACE --format gantry-csv --cluster TRACE|cluster file",
        "--trace TRACE --format openb --cluster CLUSTER --seeds x|--seeds: not a number: x",
        "make-cluster mars --out x.json|make-cluster needs a kind: philly or openb",
        "make-cluster philly --nodes -3 --out x.json|--nodes must be a positive whole number",
    })
    void badArgumentsExitTwoWithOneLine(String args, String message) {
        String[] argv = args.replace("TRACE", trace.toString()).replace("CLUSTER", cluster.toString()).split(" ");
        assertThat(run(argv)).isEqualTo(2);
        assertThat(errText()).contains(message);
        assertThat(errText().strip().lines()).hasSize(1);
    }

    @Test
    void aBadRowNamesItsLine() throws IOException {
        Path bad = TestClusters.write(dir, "bad.csv", "name,submit,duration,gpus\na,0,10,1\nb,x,10,1\n");
        assertThat(run("--trace", bad.toString(), "--format", "gantry-csv", "--cluster", cluster.toString())).isEqualTo(2);
        assertThat(errText()).contains("line 3, submit: not a number");
    }
}
