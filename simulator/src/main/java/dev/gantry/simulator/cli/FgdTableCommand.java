package dev.gantry.simulator.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import dev.gantry.placement.engine.packing.GpuSpeeds;
import dev.gantry.placement.engine.planner.SolverProfile;
import dev.gantry.simulator.cluster.ClusterFile;
import dev.gantry.simulator.policy.Policies;
import dev.gantry.simulator.replay.FgdReplay;
import dev.gantry.simulator.replay.Progress;
import dev.gantry.simulator.trace.Csv;
import dev.gantry.simulator.trace.OpenbTrace;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * {@code simulate fgd-table}: FGD's whole table (ATC '23, every workload it published) replayed
 * with one Gantry policy, each workload against the paper's FGD on GPU allocation at 100% of
 * capacity arrived. Per workload: Gantry's mean and range over the seeds run, FGD's mean and range
 * over its ten seeds, the margin, and whether the margin is more than noise (twice the standard
 * error of the difference; with one Gantry seed, FGD's spread stands in for Gantry's). Each
 * workload's result is written as it finishes and a rerun skips workloads already done, so a
 * table that takes hours can be built in pieces.
 */
final class FgdTableCommand {
    private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

    private FgdTableCommand() {
    }

    /** Gantry's and the paper's figures at 100% arrived for one workload. */
    record Row(String workload, List<Double> gantry, List<Double> fgd) {
        double gantryMean() {
            return mean(gantry);
        }

        double fgdMean() {
            return mean(fgd);
        }

        double margin() {
            return gantryMean() - fgdMean();
        }

        /** Twice the standard error of the difference of the means. */
        double noise() {
            double sf = sd(fgd);
            double sg = gantry.size() > 1 ? sd(gantry) : sf;
            return 2 * Math.sqrt(sg * sg / gantry.size() + sf * sf / Math.max(1, fgd.size()));
        }

        String verdict() {
            if (fgd.isEmpty()) {
                return "no published figure";
            }
            double m = margin();
            return m > noise() ? "ahead" : m < -noise() ? "behind" : m >= 0 ? "at or above, within noise" : "below, within noise";
        }
    }

    static int run(String[] argv, PrintStream out, PrintStream err) {
        Args a = new Args(argv, 1, Set.of("--traces", "--cluster", "--workloads", "--policy", "--mode", "--seeds", "--time-limit", "--gpu-speeds",
                "--batch", "--out"), Set.of());
        Path traces = Path.of(a.required("--traces"));
        if (!Files.isDirectory(traces)) {
            throw new UsageException("--traces: no such directory " + traces);
        }
        Path expected = traces.resolveSibling("fgd-atc23-expected-results").resolve("analysis_allo_discrete.csv");
        if (!Files.exists(expected)) {
            throw new UsageException("--traces: no published results beside it (" + expected + ")");
        }
        Path clusterPath = SimulateCommand.existing(a.required("--cluster"), "--cluster");
        String policy = a.get("--policy", "timefold");
        if (!Policies.NAMES.contains(policy)) {
            throw new UsageException("--policy: unknown policy " + policy + " (one of " + String.join(", ", Policies.NAMES) + ")");
        }
        String mode = a.get("--mode", "online");
        if (!List.of("online", "batched").contains(mode)) {
            throw new UsageException("--mode: unknown mode " + mode + " (online, batched)");
        }
        List<Long> seeds = new ArrayList<>();
        for (String s : a.get("--seeds", "42,43,44,45,46,47,48,49,50,51").split(",")) {
            try {
                seeds.add(Long.parseLong(s.trim()));
            } catch (NumberFormatException e) {
                throw new UsageException("--seeds: not a number: " + s);
            }
        }
        int batch = SimulateCommand.positiveInt(a.get("--batch", "64"), "--batch");
        Duration limit = SimulateCommand.duration(a.get("--time-limit", "100ms"), "--time-limit");
        GpuSpeeds speeds;
        try {
            speeds = GpuSpeeds.parse(a.get("--gpu-speeds", "none"));
        } catch (IllegalArgumentException e) {
            throw new UsageException("--gpu-speeds: " + e.getMessage());
        }
        Map<String, List<Double>> published = published(expected);
        List<String> workloads = a.get("--workloads", null) == null ? List.copyOf(published.keySet())
                : Arrays.stream(a.get("--workloads", null).split(",")).map(String::trim).toList();
        for (String w : workloads) {
            if (!Files.exists(traces.resolve(w + ".csv"))) {
                throw new UsageException("--workloads: no trace " + traces.resolve(w + ".csv"));
            }
        }
        Path outDir = Path.of(a.get("--out", "fgd-table"));
        ClusterFile cluster = ClusterFile.read(clusterPath);
        SolverProfile profile = SolverProfile.FAST.withTimeLimit(limit).withGpuSpeeds(speeds);
        String setup = policy + " " + mode + (mode.equals("batched") ? " (" + batch + " pods)" : "") + ", " + limit.toMillis()
                + " ms, GPU speeds " + a.get("--gpu-speeds", "none") + ", seeds " + seeds;
        List<Row> rows = new ArrayList<>();
        try {
            Files.createDirectories(outDir);
            for (String w : workloads) {
                Path done = outDir.resolve(w + ".json");
                List<Double> gantry = new ArrayList<>();
                if (Files.exists(done) && JSON.readTree(done.toFile()).path("setup").asText().equals(setup)) {
                    JSON.readTree(done.toFile()).path("allocationAt100").forEach(v -> gantry.add(v.asDouble()));
                } else {
                    FgdReplay replay = new FgdReplay(cluster, OpenbTrace.read(traces.resolve(w + ".csv")), profile, true, false, true);
                    for (long seed : seeds) {
                        gantry.add(replay.run(policy, mode.equals("online") ? 1 : batch, mode, seed, Progress.NONE).at(100));
                    }
                    Map<String, Object> result = new LinkedHashMap<>();
                    result.put("workload", w);
                    result.put("setup", setup);
                    result.put("allocationAt100", gantry);
                    JSON.writeValue(done.toFile(), result);
                }
                Row row = new Row(w, gantry, published.getOrDefault(w, List.of()));
                rows.add(row);
                out.println(line(row));
                out.flush();
            }
            Files.writeString(outDir.resolve("table.md"), markdown(setup, rows));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        out.println("wrote " + outDir.resolve("table.md"));
        return 0;
    }

    /** FGD's allocation at 100% arrived per workload, one figure per published seed. */
    static Map<String, List<Double>> published(Path expected) {
        Csv csv = Csv.read(expected);
        Map<String, List<Double>> out = new TreeMap<>();
        for (int i = 0; i < csv.size(); i++) {
            if (csv.get(i, "sc_policy").equals("06-FGD") && !csv.get(i, "100").isEmpty()) {
                out.computeIfAbsent(csv.get(i, "workload"), k -> new ArrayList<>()).add(Double.parseDouble(csv.get(i, "100")));
            }
        }
        return out;
    }

    static String markdown(String setup, List<Row> rows) {
        StringBuilder sb = new StringBuilder("Gantry " + setup + " against FGD (ATC '23, its published seeds), GPU allocation % at 100% arrived\n\n");
        sb.append("| workload | Gantry mean | Gantry range | FGD mean | FGD range | margin | noise (2 SE) | verdict |\n");
        sb.append("|---|---|---|---|---|---|---|---|\n");
        for (Row r : rows) {
            sb.append(String.format(Locale.ROOT, "| %s | %.2f | %.2f-%.2f | %.2f | %.2f-%.2f | %+.2f | %.2f | %s |%n", r.workload(), r.gantryMean(),
                    min(r.gantry()), max(r.gantry()), r.fgdMean(), min(r.fgd()), max(r.fgd()), r.margin(), r.noise(), r.verdict()));
        }
        long ahead = rows.stream().filter(r -> r.margin() >= 0).count();
        sb.append(String.format(Locale.ROOT, "%nAt or above FGD's mean on %d of %d workloads; ahead by more than noise on %d, behind by more than noise on %d.%n",
                ahead, rows.size(), rows.stream().filter(r -> r.verdict().equals("ahead")).count(),
                rows.stream().filter(r -> r.verdict().equals("behind")).count()));
        return sb.toString();
    }

    private static String line(Row r) {
        return String.format(Locale.ROOT, "%-28s gantry %.2f  fgd %.2f  margin %+.2f (noise %.2f): %s", r.workload(), r.gantryMean(), r.fgdMean(),
                r.margin(), r.noise(), r.verdict());
    }

    private static double mean(List<Double> v) {
        return v.stream().mapToDouble(Double::doubleValue).average().orElse(Double.NaN);
    }

    private static double sd(List<Double> v) {
        if (v.size() < 2) {
            return 0;
        }
        double m = mean(v);
        return Math.sqrt(v.stream().mapToDouble(x -> (x - m) * (x - m)).sum() / (v.size() - 1));
    }

    private static double min(List<Double> v) {
        return v.stream().mapToDouble(Double::doubleValue).min().orElse(Double.NaN);
    }

    private static double max(List<Double> v) {
        return v.stream().mapToDouble(Double::doubleValue).max().orElse(Double.NaN);
    }
}
