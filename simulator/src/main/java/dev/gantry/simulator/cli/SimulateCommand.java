package dev.gantry.simulator.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import dev.gantry.placement.engine.forecast.StartForecaster;
import dev.gantry.placement.engine.packing.GpuSpeeds;
import dev.gantry.placement.engine.planner.SolverProfile;
import dev.gantry.placement.engine.solver.MoveCost;
import dev.gantry.simulator.cluster.ClusterFile;
import dev.gantry.simulator.cluster.ClusterGenerators;
import dev.gantry.simulator.policy.Policies;
import dev.gantry.simulator.replay.FgdReplay;
import dev.gantry.simulator.replay.Progress;
import dev.gantry.simulator.replay.Replay;
import dev.gantry.simulator.replay.ReplayOptions;
import dev.gantry.simulator.replay.ReplayResult;
import dev.gantry.simulator.report.FgdReport;
import dev.gantry.simulator.report.JobReport;
import dev.gantry.simulator.trace.OpenbTrace;
import dev.gantry.simulator.trace.TraceFormatException;
import dev.gantry.simulator.trace.TraceJob;
import dev.gantry.simulator.trace.TraceReaders;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * {@code bin/gantry simulate}: replays a trace against several policies and writes
 * {@code metrics.json} and {@code report.html}; a one-screen summary goes to stdout, progress to
 * stderr. {@code simulate make-cluster philly|openb ...} writes a cluster file. Exit 2 with one
 * line for a bad argument or an unreadable input.
 */
public final class SimulateCommand {
    static final String USAGE = "usage: simulate --trace FILE --format philly|openb|openb-timed|gantry-csv --cluster FILE "
            + "[--policies timefold,greedy,fifo,backfill,las] [--window 60s] [--time-limit 200ms] [--solver-moves N] [--reservations K] [--from T --to T] [--out DIR] "
            + "[--gpu-speeds default|none|MODEL=SPEED,...] [--preemption] [--no-validate] [--no-fast-path] [--no-reservation] [--forecast] [--reclaim-toward-fair-share] [--quiet] [--migratable 0.5 | 0,0.5 --move-cost 300s --move-weights 1000,100] [openb: --seeds 42,43,44 --modes online,batched --batch 64 --migrate]\n"
            + "       simulate make-cluster philly (--nodes N | --trace FILE [--from T --to T] [--load 0.85]) --out FILE\n"
            + "       simulate make-cluster openb --nodes-csv FILE --out FILE\n"
            + "       simulate fgd-table --traces DIR --cluster FILE [--workloads a,b] [--policy timefold] [--mode online|batched] "
            + "[--seeds 42,...,51] [--time-limit 100ms] [--gpu-speeds none] [--batch 64] [--out DIR]";

    private SimulateCommand() {
    }

    public static void main(String[] args) {
        System.setProperty("java.awt.headless", "true");
        // Timefold logs every solve at INFO: thousands of lines per replay
        System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", System.getProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn"));
        System.exit(run(args, System.out, System.err));
    }

    public static int run(String[] args, PrintStream out, PrintStream err) {
        try {
            if (args.length > 0 && (args[0].equals("--help") || args[0].equals("-h") || args[0].equals("help"))) {
                out.println(USAGE);
                return 0;
            }
            if (args.length > 0 && args[0].equals("make-cluster")) {
                return makeCluster(args, out, err);
            }
            if (args.length > 0 && args[0].equals("fgd-table")) {
                return FgdTableCommand.run(args, out, err);
            }
            return simulate(args, out, err);
        } catch (UsageException | TraceFormatException e) {
            err.println("simulate: " + e.getMessage());
            return 2;
        } catch (IllegalArgumentException e) {
            err.println("simulate: " + e.getMessage());
            return 2;
        }
    }

    private static int simulate(String[] argv, PrintStream out, PrintStream err) {
        Args a = new Args(argv, 0,
                Set.of("--trace", "--format", "--cluster", "--policies", "--window", "--time-limit", "--solver-moves", "--reservations", "--gpu-speeds", "--from", "--to", "--out", "--seeds",
                        "--modes", "--batch", "--migratable", "--move-cost", "--move-weights"),
                Set.of("--preemption", "--no-validate", "--quiet", "--migrate", "--no-fast-path", "--no-reservation", "--forecast",
                        "--reclaim-toward-fair-share"));
        Path trace = existing(a.required("--trace"), "--trace");
        String format = a.required("--format");
        if (!List.of("philly", "openb", "openb-timed", "gantry-csv").contains(format)) {
            throw new UsageException("--format: unknown format " + format + " (one of philly, openb, openb-timed, gantry-csv)");
        }
        Path clusterPath = existing(a.required("--cluster"), "--cluster");
        List<String> policies = Arrays.stream(a.get("--policies", "timefold,greedy,fifo,backfill").split(",")).map(String::trim).toList();
        for (String p : policies) {
            if (!Policies.NAMES.contains(p)) {
                throw new UsageException("--policies: unknown policy " + p + " (one of " + String.join(", ", Policies.NAMES) + ")");
            }
        }
        Duration window = duration(a.get("--window", "60s"), "--window");
        Duration limit = duration(a.get("--time-limit", "200ms"), "--time-limit");
        Long from = a.get("--from", null) == null ? null : time(a.get("--from", null), "--from");
        Long to = a.get("--to", null) == null ? null : time(a.get("--to", null), "--to");
        if (from != null && to != null && to <= from) {
            throw new UsageException("--to must be after --from");
        }
        Path outDir = Path.of(a.get("--out", "simulation-out"));
        ClusterFile cluster = ClusterFile.read(clusterPath);
        SolverProfile profile = SolverProfile.FAST.withTimeLimit(limit).withGpuSpeeds(gpuSpeeds(a.get("--gpu-speeds", "default")))
                .withMoveCost(moveWeights(a.get("--move-weights", "")))
                // the service's gantry.placement.reclaim.toward-fair-share, in the same profile the service plans with
                .withReclaimTowardFairShare(a.flag("--reclaim-toward-fair-share"));
        ProgressBar bar = null;
        Map<String, Object> run = new LinkedHashMap<>();
        run.put("trace", trace.toString());
        run.put("format", format);
        run.put("gpuSpeeds", a.get("--gpu-speeds", "default"));
        run.put("reclaimTowardFairShare", profile.reclaimTowardFairShare());
        run.put("moveWeights", profile.moveCost().toString() + " (score per move, per GPU moved)");
        run.put("cluster", clusterPath + " (" + cluster.nodes().size() + " nodes, " + cluster.gpuMilli() / 1000 + " GPUs)");
        run.put("policies", String.join(",", policies));
        run.put("timeLimit", limit.toMillis() + " ms");
        run.put("command", "simulate " + String.join(" ", argv));
        run.put("javaAvailableProcessors", Runtime.getRuntime().availableProcessors());
        Map<String, Object> json;
        String summary;
        String html;
        if (format.equals("openb")) {
            List<Long> seeds = new ArrayList<>();
            for (String s : a.get("--seeds", "42,43,44").split(",")) {
                try {
                    seeds.add(Long.parseLong(s.trim()));
                } catch (NumberFormatException e) {
                    throw new UsageException("--seeds: not a number: " + s);
                }
            }
            List<String> modes = Arrays.stream(a.get("--modes", "online,batched").split(",")).map(String::trim).toList();
            for (String m : modes) {
                if (!List.of("online", "batched").contains(m)) {
                    throw new UsageException("--modes: unknown mode " + m + " (online, batched)");
                }
            }
            int batch = positiveInt(a.get("--batch", "64"), "--batch");
            List<OpenbTrace.Pod> pods = OpenbTrace.read(trace);
            if (!a.flag("--quiet")) {
                bar = new ProgressBar(err, policies.size() * modes.size() * seeds.size());
            }
            run.put("protocol", "FGD (ATC'23): shuffled arrivals, no departures, until 130% of GPU capacity has arrived");
            run.put("seeds", seeds.toString());
            run.put("batch", batch + " pods per window (batched mode)");
            run.put("migrate", a.flag("--migrate"));
            FgdReplay replay = new FgdReplay(cluster, pods, profile, !a.flag("--no-validate"), a.flag("--migrate"),
                    !a.flag("--no-fast-path"));
            run.put("timefoldFastPath", !a.flag("--no-fast-path"));
            List<FgdReplay.Curve> curves = new ArrayList<>();
            int i = 0;
            for (String mode : modes) {
                for (String p : policies) {
                    for (long seed : seeds) {
                        if (bar != null) {
                            bar.startRun(i);
                        }
                        i++;
                        curves.add(replay.run(p, mode.equals("online") ? 1 : batch, mode, seed, bar == null ? Progress.NONE : bar));
                    }
                }
            }
            Path expected = trace.getParent() == null ? null : trace.getParent().resolveSibling("fgd-atc23-expected-results").resolve("analysis_allo_discrete.csv");
            String workload = trace.getFileName().toString().replaceFirst("\\.csv$", "");
            FgdReport report = new FgdReport(run, curves, expected != null && Files.exists(expected) ? expected : null, workload);
            json = report.json();
            summary = report.summary();
            html = report.html();
        } else {
            List<TraceJob> jobs = switch (format) {
                case "philly" -> TraceReaders.philly(trace, from, to);
                case "openb-timed" -> TraceReaders.openbTimed(trace, from, to);
                default -> TraceReaders.gantryCsv(trace, from, to);
            };
            if (jobs.isEmpty()) {
                throw new UsageException("no jobs in " + trace + (from != null || to != null ? " between --from and --to" : ""));
            }
            long windowSeconds = Math.max(1, window.toSeconds());
            run.put("window", windowSeconds + " s");
            run.put("jobs", jobs.size());
            run.put("from", from == null ? "start" : from);
            run.put("to", to == null ? "end" : to);
            run.put("preemption", a.flag("--preemption"));
            run.put("timefoldFastPath", !a.flag("--no-fast-path"));
            run.put("timefoldReservation", !a.flag("--no-reservation"));
            Long solverMoves = a.get("--solver-moves", null) == null ? null : (long) positiveInt(a.get("--solver-moves", null), "--solver-moves");
            if (solverMoves != null) {
                run.put("solverMoves", solverMoves + " per window, fixed seed (reproducible; --time-limit ignored by the solver)");
            }
            int reservations = a.get("--reservations", null) == null ? 1 : positiveInt(a.get("--reservations", null), "--reservations");
            run.put("timefoldReservations", reservations);
            // the placement service's forecaster with its default bounds (gantry.placement.forecast.*)
            StartForecaster forecaster = a.flag("--forecast") ? new StartForecaster(FORECAST_JOBS, FORECAST_HORIZON_SECONDS,
                    FORECAST_STEPS, reservations) : null;
            if (forecaster != null) {
                run.put("startForecast", "first " + FORECAST_JOBS + " jobs in line, " + FORECAST_HORIZON_SECONDS / 3600 + " h ahead, "
                        + FORECAST_STEPS + " release times at most");
            }
            // several fractions (--migratable 0,0.5): each policy runs once per fraction, named policy@mF, in one run
            List<Double> fractions = new ArrayList<>();
            for (String f : a.get("--migratable", "0").split(",")) {
                fractions.add(fraction(f.trim(), "--migratable"));
            }
            Duration moveCost = duration(a.get("--move-cost", "300s"), "--move-cost");
            if (fractions.stream().anyMatch(f -> f > 0)) {
                run.put("migratable", fractions + " of the jobs (by name hash), each move costing " + moveCost.toSeconds() + " s");
            }
            ReplayOptions base = new ReplayOptions(windowSeconds, profile, a.flag("--preemption"), !a.flag("--no-validate"),
                    !a.flag("--no-fast-path"), !a.flag("--no-reservation"), solverMoves, reservations, forecaster);
            if (!a.flag("--quiet")) {
                bar = new ProgressBar(err, policies.size() * fractions.size());
            }
            List<ReplayResult> results = new ArrayList<>();
            int i = 0;
            for (double f : fractions) {
                Replay replay = new Replay(cluster, jobs, base.withMigration(f, moveCost.toSeconds()));
                for (String p : policies) {
                    if (bar != null) {
                        bar.startRun(i);
                    }
                    i++;
                    ReplayResult r = replay.run(p, bar == null ? Progress.NONE : bar);
                    results.add(fractions.size() > 1 ? r.named(p + "@m" + f) : r);
                }
            }
            JobReport report = new JobReport(run, results);
            json = report.json();
            StringBuilder moves = new StringBuilder();
            results.stream().filter(r -> r.migrations() > 0)
                    .forEach(r -> moves.append(r.policy()).append(": ").append(r.migrations()).append(" jobs moved\n"));
            summary = report.summary() + moves;
            html = report.html();
        }
        if (bar != null) {
            bar.done();
        }
        write(outDir, json, html);
        out.print(summary);
        out.println("wrote " + outDir.resolve("metrics.json") + " and " + outDir.resolve("report.html"));
        return 0;
    }

    /** The placement service's defaults for its forecast (gantry.placement.forecast.max-jobs, .horizon, .max-steps). */
    static final int FORECAST_JOBS = 500;
    static final long FORECAST_HORIZON_SECONDS = 7 * 24 * 3600;
    static final int FORECAST_STEPS = 2000;

    private static int makeCluster(String[] argv, PrintStream out, PrintStream err) {
        if (argv.length < 2 || !List.of("philly", "openb").contains(argv[1])) {
            throw new UsageException("make-cluster needs a kind: philly or openb");
        }
        Args a = new Args(argv, 2, Set.of("--nodes", "--trace", "--from", "--to", "--load", "--out", "--nodes-csv"), Set.of());
        Path outFile = Path.of(a.required("--out"));
        ClusterFile cluster;
        if (argv[1].equals("philly")) {
            int nodes;
            if (a.get("--nodes", null) != null) {
                nodes = positiveInt(a.get("--nodes", null), "--nodes");
            } else {
                Path trace = existing(a.required("--trace"), "--trace");
                double load;
                try {
                    load = Double.parseDouble(a.get("--load", "0.85"));
                } catch (NumberFormatException e) {
                    throw new UsageException("--load: not a number");
                }
                if (load <= 0 || load > 1.5) {
                    throw new UsageException("--load must be in (0, 1.5]");
                }
                Long from = a.get("--from", null) == null ? null : time(a.get("--from", null), "--from");
                Long to = a.get("--to", null) == null ? null : time(a.get("--to", null), "--to");
                nodes = ClusterGenerators.phillyNodesFor(TraceReaders.philly(trace, from, to), load);
            }
            cluster = ClusterGenerators.philly(nodes);
        } else {
            cluster = ClusterGenerators.openb(existing(a.required("--nodes-csv"), "--nodes-csv"));
        }
        try {
            if (outFile.getParent() != null) {
                Files.createDirectories(outFile.getParent());
            }
            Files.writeString(outFile, cluster.toJson());
        } catch (IOException e) {
            throw new UsageException("--out: cannot write " + outFile + ": " + e.getMessage());
        }
        out.println("wrote " + outFile + ": " + cluster.nodes().size() + " nodes, " + cluster.gpuMilli() / 1000 + " GPUs");
        return 0;
    }

    private static void write(Path dir, Map<String, Object> json, String html) {
        try {
            Files.createDirectories(dir);
            new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT).writeValue(dir.resolve("metrics.json").toFile(), json);
            Files.writeString(dir.resolve("report.html"), html);
        } catch (IOException e) {
            throw new UsageException("--out: cannot write to " + dir + ": " + e.getMessage());
        }
    }

    static Path existing(String p, String option) {
        Path path = Path.of(p);
        if (!Files.isRegularFile(path)) {
            throw new UsageException(option + ": no such file " + p);
        }
        return path;
    }

    private static double fraction(String text, String flag) {
        try {
            double v = Double.parseDouble(text);
            if (v < 0 || v > 1) {
                throw new NumberFormatException();
            }
            return v;
        } catch (NumberFormatException e) {
            throw new UsageException(flag + ": expected a fraction 0..1, got " + text);
        }
    }

    static Duration duration(String text, String option) {
        try {
            return SolverProfile.parseDuration(text);
        } catch (IllegalArgumentException e) {
            throw new UsageException(option + ": " + e.getMessage());
        }
    }

    private static long time(String text, String option) {
        try {
            return TraceReaders.parseTime(text);
        } catch (IllegalArgumentException e) {
            throw new UsageException(option + ": " + e.getMessage());
        }
    }

    static int positiveInt(String text, String option) {
        try {
            int v = Integer.parseInt(text.trim());
            if (v > 0) {
                return v;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw new UsageException(option + " must be a positive whole number, not " + text);
    }

    private static MoveCost moveWeights(String spec) {
        try {
            return MoveCost.parse(spec);
        } catch (IllegalArgumentException e) {
            throw new UsageException("--move-weights: " + e.getMessage());
        }
    }

    private static GpuSpeeds gpuSpeeds(String spec) {
        try {
            return GpuSpeeds.parse(spec);
        } catch (IllegalArgumentException e) {
            throw new UsageException("--gpu-speeds: " + e.getMessage());
        }
    }
}
