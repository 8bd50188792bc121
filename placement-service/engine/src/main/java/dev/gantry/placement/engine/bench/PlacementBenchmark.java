package dev.gantry.placement.engine.bench;

import dev.gantry.placement.engine.domain.Plan;
import dev.gantry.placement.engine.domain.Scenario;
import dev.gantry.placement.engine.json.ScenarioCodec;
import dev.gantry.placement.engine.planner.Planner;
import dev.gantry.placement.engine.planner.Planners;
import dev.gantry.placement.engine.planner.SolverProfile;
import dev.gantry.placement.engine.validation.PlanMetrics;
import dev.gantry.placement.engine.validation.PlanValidator;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * Not a test: generates clusters of 200, 1,000 and 5,000 nodes (2 pending gangs per node,
 * 70% busy) and prints, per size and planner (timefold at 0.2 s, 1 s, 5 s), the time to the first
 * valid plan, net priority-weighted GPUs, stranded GPUs, preemptions, migrations and peak heap.
 * <pre>
 * java -Xmx4g -cp "target/gantry-placement-engine-0.1.0-SNAPSHOT.jar:target/lib/*" \
 *     dev.gantry.placement.engine.bench.PlacementBenchmark [--sizes 200,1000,5000] [--limits 0.2,1,5] [--write-scenarios DIR]
 * </pre>
 */
public final class PlacementBenchmark {
    private static final long SEED = 20261202L;

    private PlacementBenchmark() {
    }

    public static void main(String[] args) throws IOException {
        System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", System.getProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn"));
        List<Integer> sizes = List.of(200, 1000, 5000);
        List<Double> limits = List.of(0.2, 1.0, 5.0);
        Path writeDir = null;
        for (int i = 0; i + 1 < args.length; i += 2) {
            switch (args[i]) {
                case "--sizes" -> sizes = Arrays.stream(args[i + 1].split(",")).map(Integer::parseInt).toList();
                case "--limits" -> limits = Arrays.stream(args[i + 1].split(",")).map(Double::parseDouble).toList();
                case "--write-scenarios" -> writeDir = Path.of(args[i + 1]);
                default -> throw new IllegalArgumentException("unknown argument " + args[i]);
            }
        }
        warmUp();
        System.out.println("| nodes | pending | planner | limit | first valid plan (ms) | wall (ms) | cpu (ms) | valid | netPriorityGpus | placedGpus | strandedGpus | preemptions | migrations | peak heap (MiB) | note |");
        System.out.println("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
        for (int nodes : sizes) {
            Scenario sc = ClusterGenerator.generate("bench-" + nodes, nodes, 2 * nodes, 0.7, SEED + nodes);
            if (writeDir != null) {
                Files.createDirectories(writeDir);
                Files.writeString(writeDir.resolve("bench-" + nodes + ".json"), ScenarioCodec.write(sc));
            }
            // a service plans windows of its cluster's size all day: the rows measure a JVM that has
            // planned one before (compiled code for this size), not the first window after start
            Planners.byName("timefold").plan(sc, SolverProfile.BALANCED.withTimeLimit(Duration.ofSeconds(1)));
            run(sc, "greedy", null);
            run(sc, "fifo", null);
            for (double limit : limits) {
                run(sc, "timefold", limit);
            }
        }
    }

    /** One small solve so class loading and stream compilation are not billed to the first row. */
    private static void warmUp() {
        Scenario small = ClusterGenerator.generate("warm-up", 32, 64, 0.7, 1);
        Planners.byName("timefold").plan(small, SolverProfile.FAST);
    }

    private static void run(Scenario sc, String plannerName, Double limitSeconds) {
        Planner planner = Planners.byName(plannerName);
        SolverProfile base = limitSeconds == null || limitSeconds <= 0.2 ? SolverProfile.FAST
                : limitSeconds <= 2 ? SolverProfile.BALANCED : SolverProfile.THOROUGH;
        SolverProfile profile = limitSeconds == null ? base : base.withTimeLimit(Duration.ofMillis(Math.round(limitSeconds * 1000)));
        System.gc();
        resetPeaks();
        var threads = ManagementFactory.getThreadMXBean();
        long cpu0 = threads.getCurrentThreadCpuTime();
        long t0 = System.nanoTime();
        Plan plan = planner.plan(sc, profile);
        long wall = (System.nanoTime() - t0) / 1_000_000;
        // CPU time of the planning thread: what the call costs on an idle core, whatever the load
        long cpu = (threads.getCurrentThreadCpuTime() - cpu0) / 1_000_000;
        long heap = peakHeapMiB();
        boolean valid = PlanValidator.validate(sc, plan).isEmpty();
        PlanMetrics m = PlanMetrics.of(sc, plan);
        // the timefold planner holds a valid plan (greedy's seed) from seedMillis on; the rest is improvement
        String first = plan.metadata().getOrDefault("seedMillis", Long.toString(wall));
        var meta = plan.metadata();
        // where the window went, also when the solver's plan lost to the floor
        String timings = meta.containsKey("modelMillis") ? "model " + meta.get("modelMillis") + " ms"
                + (meta.containsKey("solverMillis") ? ", solver " + meta.get("solverMillis") + " ms, extract " + meta.get("extractMillis") + " ms" : "")
                + (meta.containsKey("guaranteeShortfallGpus") ? ", under guarantees " + meta.get("guaranteeShortfallGpus") + " GPUs" : "") : "";
        String note = meta.containsKey("fallback") ? "fallback: " + meta.get("fallback") + (timings.isEmpty() ? "" : "; " + timings)
                : meta.containsKey("score") ? "score " + meta.get("score") + ", options " + meta.get("options") + ", " + timings : "";
        System.out.printf(Locale.ROOT, "| %d | %d | %s | %s | %s | %d | %d | %s | %.1f | %.1f | %.1f | %d | %d | %d | %s |%n",
                sc.nodes().size(), sc.pending().size(), plannerName, limitSeconds == null ? "-" : limitSeconds + " s", first, wall, cpu,
                valid ? "yes" : "NO", m.netPriorityGpus(), m.placedGpus(), m.strandedGpus(), m.preemptedJobs(), m.migratedTasks(), heap, note);
        System.out.flush();
    }

    private static void resetPeaks() {
        for (MemoryPoolMXBean pool : ManagementFactory.getMemoryPoolMXBeans()) {
            if (pool.getType() == MemoryType.HEAP) {
                pool.resetPeakUsage();
            }
        }
    }

    private static long peakHeapMiB() {
        long sum = 0;
        List<MemoryPoolMXBean> pools = new ArrayList<>(ManagementFactory.getMemoryPoolMXBeans());
        for (MemoryPoolMXBean pool : pools) {
            if (pool.getType() == MemoryType.HEAP) {
                sum += pool.getPeakUsage().getUsed();
            }
        }
        return sum / (1024 * 1024);
    }
}
