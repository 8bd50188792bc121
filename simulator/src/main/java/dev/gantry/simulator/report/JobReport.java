package dev.gantry.simulator.report;

import dev.gantry.simulator.replay.JobRecord;
import dev.gantry.simulator.replay.ReplayResult;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** metrics.json, report.html and the stdout summary of a job-trace replay (Philly, gantry-csv). */
public final class JobReport {
    private final Map<String, Object> run;
    private final List<ReplayResult> results;
    private final List<PolicyMetrics> metrics;

    public JobReport(Map<String, Object> run, List<ReplayResult> results) {
        this.run = run;
        this.results = results;
        this.metrics = results.stream().map(PolicyMetrics::of).toList();
    }

    public List<PolicyMetrics> metrics() {
        return metrics;
    }

    public Map<String, Object> json() {
        Map<String, Object> root = new LinkedHashMap<>();
        root.put("format", "gantry-simulation/v1");
        root.put("run", run);
        List<Map<String, Object>> ps = new ArrayList<>();
        long first = results.stream().flatMap(r -> r.jobs().stream()).mapToLong(JobRecord::submit).min().orElse(0);
        long last = results.stream().flatMap(r -> r.jobs().stream()).filter(JobRecord::finished).mapToLong(JobRecord::end).max().orElse(first + 1);
        long bucket = Math.max(60, (last - first) / 400);
        int buckets = (int) ((last - first) / bucket) + 1;
        for (int i = 0; i < metrics.size(); i++) {
            Map<String, Object> m = metrics.get(i).toMap();
            ReplayResult r = results.get(i);
            double cap = r.capacityMilli() / 1000.0;
            double[] held = PolicyMetrics.heldSeries(r.segments(), first, bucket, buckets);
            double[] pct = new double[held.length];
            for (int k = 0; k < held.length; k++) {
                pct[k] = Math.round(1000 * held[k] / cap) / 10.0;
            }
            m.put("allocationOverTime", Map.of("fromSeconds", first, "bucketSeconds", bucket, "percentOfGpus", pct));
            List<ForecastAccuracy> forecasts = ForecastAccuracy.of(r);
            if (!forecasts.isEmpty()) {
                m.put("startForecast", forecasts.stream().map(ForecastAccuracy::toMap).toList());
            }
            ps.add(m);
        }
        root.put("policies", ps);
        root.put("ratios", ratios());
        return root;
    }

    /** Each policy's mean delay and allocation divided by fifo's and greedy's (when they ran). */
    Map<String, Object> ratios() {
        Map<String, Object> out = new LinkedHashMap<>();
        for (String base : List.of("fifo", "greedy")) {
            PolicyMetrics b = byName(base);
            if (b == null) {
                continue;
            }
            Map<String, Object> per = new LinkedHashMap<>();
            for (PolicyMetrics m : metrics) {
                per.put(m.policy(), Map.of(
                        "meanDelay", b.delayMean() == 0 ? Double.NaN : m.delayMean() / b.delayMean(),
                        "allocationDuringArrivals", m.allocationDuringArrivals() / b.allocationDuringArrivals()));
            }
            out.put("vs_" + base, per);
        }
        return out;
    }

    private PolicyMetrics byName(String name) {
        return metrics.stream().filter(m -> m.policy().equals(name)).findFirst().orElse(null);
    }

    public String summary() {
        StringBuilder sb = new StringBuilder();
        sb.append(String.format(Locale.ROOT, "%-9s %6s %8s %8s %8s %8s %9s %7s %9s %7s %6s %6s %8s %8s%n",
                "policy", "jobs", "delay_h", "p50_h", "p95_h", "p99_h", "jct_h", "slowdn", "makespan", "alloc%", "strand", "preem",
                "solve_ms", "wall_s"));
        for (PolicyMetrics m : metrics) {
            sb.append(String.format(Locale.ROOT, "%-9s %6d %8.2f %8.2f %8.2f %8.2f %9.2f %7.1f %8.1fh %7.1f %6.1f %6d %8.1f %8.1f%n",
                    m.policy(), m.finished(), h(m.delayMean()), h(m.delayP50()), h(m.delayP95()), h(m.delayP99()), h(m.jctMean()),
                    m.slowdownMean(), h(m.makespan()), 100 * m.allocationDuringArrivals(), m.strandedGpusMean(), m.preemptions(),
                    m.solveMillisMean(), m.wallMillis() / 1000.0));
        }
        if (!metrics.isEmpty()) {
            PolicyMetrics any = metrics.getFirst();
            sb.append(String.format(Locale.ROOT, "%-9s %6s %8.2f %8s %8s %8s %9.2f %7.1f %8.1fh %7s   (lower bounds; alloc ceiling 100%%)%n",
                    "bound", "", 0.0, "0", "0", "0", h(any.jctMeanLowerBound()), 1.0, h(any.makespanLowerBound()), "100"));
        }
        // jobs of 8+ GPUs (a whole node or more): what moves and reservations are for
        if (metrics.stream().anyMatch(m -> m.largeJobs() > 0 || m.moves() > 0)) {
            sb.append(String.format(Locale.ROOT, "%-16s %6s %11s %10s %7s%n", "policy", "large", "l_delay_h", "l_p95_h", "moves"));
            for (PolicyMetrics m : metrics) {
                sb.append(String.format(Locale.ROOT, "%-16s %6d %11.3f %10.3f %7d%n", m.policy(), m.largeJobs(), h(m.largeDelayMean()),
                        h(m.largeDelayP95()), m.moves()));
            }
        }
        for (String base : List.of("fifo", "greedy")) {
            PolicyMetrics b = byName(base);
            if (b == null) {
                continue;
            }
            sb.append("vs ").append(base).append(": ");
            for (PolicyMetrics m : metrics) {
                sb.append(String.format(Locale.ROOT, "%s delay x%.2f alloc x%.3f; ", m.policy(),
                        b.delayMean() == 0 ? Double.NaN : m.delayMean() / b.delayMean(), m.allocationDuringArrivals() / b.allocationDuringArrivals()));
            }
            sb.append('\n');
        }
        results.stream().flatMap(r -> ForecastAccuracy.of(r).stream()).forEach(f -> sb.append(f.line()));
        return sb.toString();
    }

    private static double h(double seconds) {
        return seconds / 3600.0;
    }

    public String html() {
        StringBuilder b = new StringBuilder();
        Html.head(b, "Gantry simulation: " + run.getOrDefault("trace", ""));
        b.append("<h1>Trace replay</h1>\n");
        Html.runTable(b, run);
        b.append("<h2>Summary</h2>\n<pre>").append(Html.esc(summary())).append("</pre>\n");
        b.append("<p>delay = queueing delay (first start − submission); jct = completion − submission; slowdown = JCT / max(duration, 10 s); ")
                .append("alloc = GPU-time held / (capacity × arrival span); strand = mean free GPUs on partly used nodes after each window. ")
                .append("Lower bounds: JCT ≥ duration, makespan ≥ max(total GPU-time / capacity, latest submission + duration).</p>\n");
        if (!results.isEmpty()) {
            long first = results.stream().flatMap(r -> r.jobs().stream()).mapToLong(JobRecord::submit).min().orElse(0);
            long last = results.stream().flatMap(r -> r.jobs().stream()).filter(JobRecord::finished).mapToLong(JobRecord::end).max().orElse(first + 1);
            long bucket = Math.max(60, (last - first) / 400);
            int buckets = (int) ((last - first) / bucket) + 1;
            double cap = results.getFirst().capacityMilli() / 1000.0;
            Map<String, double[][]> alloc = Charts.ordered();
            Map<String, double[][]> cdf = Charts.ordered();
            for (ReplayResult r : results) {
                double[] held = PolicyMetrics.heldSeries(r.segments(), first, bucket, buckets);
                double[] x = new double[buckets];
                double[] y = new double[buckets];
                for (int i = 0; i < buckets; i++) {
                    x[i] = i * bucket / 3600.0;
                    y[i] = 100 * held[i] / cap;
                }
                alloc.put(r.policy(), new double[][] {x, y});
                double[] d = r.jobs().stream().filter(JobRecord::finished).mapToDouble(JobRecord::queueingDelay).sorted().toArray();
                int n = Math.min(d.length, 500);
                double[] cx = new double[n];
                double[] cy = new double[n];
                for (int i = 0; i < n; i++) {
                    int k = (int) ((long) (i + 1) * d.length / n) - 1;
                    cx[i] = Math.max(1, d[k]);
                    cy[i] = (k + 1.0) / d.length;
                }
                cdf.put(r.policy(), new double[][] {cx, cy});
            }
            Html.img(b, Charts.lines("GPU allocation over time", "hours since first submission", "% of GPUs held", alloc, false, 100.0));
            Html.img(b, Charts.lines("Queueing delay CDF (delays < 1 s drawn at 1 s)", "queueing delay (s, log)", "fraction of jobs", cdf, true, null));
            Map<String, Double> delay = Charts.ordered();
            Map<String, Double> jct = Charts.ordered();
            Map<String, Double> mk = Charts.ordered();
            Map<String, Double> al = Charts.ordered();
            Map<String, Double> solve = Charts.ordered();
            metrics.forEach(m -> {
                delay.put(m.policy(), h(m.delayMean()));
                jct.put(m.policy(), h(m.jctMean()));
                mk.put(m.policy(), h(m.makespan()));
                al.put(m.policy(), 100 * m.allocationDuringArrivals());
                solve.put(m.policy(), m.solveMillisMean());
            });
            PolicyMetrics any = metrics.getFirst();
            Html.img(b, Charts.bars("Mean queueing delay (lower bound 0)", "hours", delay, 0.0, "bound 0"));
            Html.img(b, Charts.bars("Mean JCT with its lower bound (mean duration)", "hours", jct, h(any.jctMeanLowerBound()), "lower bound"));
            Html.img(b, Charts.bars("Makespan with its lower bound", "hours", mk, h(any.makespanLowerBound()), "lower bound"));
            Html.img(b, Charts.bars("GPU allocation during arrivals (ceiling 100%)", "%", al, 100.0, "ceiling"));
            Html.img(b, Charts.bars("Mean solve time per window", "ms", solve, null, null));
        }
        Html.tail(b);
        return b.toString();
    }
}
