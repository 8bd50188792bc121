package dev.gantry.simulator.report;

import dev.gantry.simulator.replay.FgdReplay;
import dev.gantry.simulator.trace.Csv;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** metrics.json, report.html and the summary of an OpenB (FGD protocol) run, beside the paper's published curves. */
public final class FgdReport {
    private static final int[] POINTS = {50, 70, 80, 90, 95, 100, 110, 120, 130};
    private final Map<String, Object> run;
    private final List<FgdReplay.Curve> curves;
    /** published policy -> mean curve over seeds (same workload), empty when the file is absent. */
    private final Map<String, double[]> published = new LinkedHashMap<>();

    public FgdReport(Map<String, Object> run, List<FgdReplay.Curve> curves, Path expected, String workload) {
        this.run = run;
        this.curves = curves;
        if (expected != null) {
            Csv csv = Csv.read(expected);
            Map<String, List<double[]>> rows = new LinkedHashMap<>();
            for (int i = 0; i < csv.size(); i++) {
                if (!csv.get(i, "workload").equals(workload)) {
                    continue;
                }
                double[] c = new double[131];
                for (int p = 0; p <= 130; p++) {
                    String v = csv.get(i, Integer.toString(p));
                    c[p] = v.isEmpty() ? Double.NaN : Double.parseDouble(v);
                }
                rows.computeIfAbsent(csv.get(i, "sc_policy"), k -> new ArrayList<>()).add(c);
            }
            rows.forEach((k, v) -> published.put(k, mean(v)));
            run.put("publishedResults", expected + " (workload " + workload + ", mean over " + rows.values().stream().findFirst().map(List::size).orElse(0) + " seeds)");
        }
    }

    /** Mean curve per "policy mode" over the seeds run. */
    Map<String, double[]> means() {
        Map<String, List<double[]>> by = new LinkedHashMap<>();
        curves.forEach(c -> by.computeIfAbsent(c.policy() + " " + c.mode(), k -> new ArrayList<>()).add(c.allocation()));
        Map<String, double[]> out = new LinkedHashMap<>();
        by.forEach((k, v) -> out.put(k, mean(v)));
        return out;
    }

    private static double[] mean(List<double[]> v) {
        double[] m = new double[131];
        for (double[] c : v) {
            for (int i = 0; i < 131; i++) {
                m[i] += c[i] / v.size();
            }
        }
        return m;
    }

    public Map<String, Object> json() {
        Map<String, Object> root = new LinkedHashMap<>();
        root.put("format", "gantry-simulation-fgd/v1");
        root.put("run", run);
        List<Map<String, Object>> runs = new ArrayList<>();
        for (FgdReplay.Curve c : curves) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("policy", c.policy());
            m.put("mode", c.mode());
            m.put("seed", c.seed());
            m.put("allocationAt100", c.at(100));
            m.put("allocationAt130", c.at(130));
            m.put("arrivedPods", c.arrivedPods());
            m.put("failedPods", c.failedPods());
            m.put("windows", c.windows());
            m.put("solveMillisMean", c.solveMillisMean());
            m.put("wallMillis", c.wallMillis());
            m.put("allocationByArrivedPercent", c.allocation());
            runs.add(m);
        }
        root.put("runs", runs);
        Map<String, Object> mean = new LinkedHashMap<>();
        means().forEach((k, v) -> mean.put(k, Map.of("allocationAt100", v[100], "allocationAt130", v[130], "gapTo100At100", 100 - v[100])));
        root.put("meanOverSeeds", mean);
        Map<String, Object> pub = new LinkedHashMap<>();
        published.forEach((k, v) -> pub.put(k, Map.of("allocationAt100", v[100], "allocationAt130", v[130])));
        root.put("publishedFgdAtc23", pub);
        return root;
    }

    public String summary() {
        StringBuilder sb = new StringBuilder("GPU allocation % at arrived % of capacity (mean over seeds); ceiling 100\n");
        sb.append(String.format(Locale.ROOT, "%-26s", "policy/mode"));
        for (int p : POINTS) {
            sb.append(String.format(Locale.ROOT, " %6s", p + "%"));
        }
        sb.append("  gap@100\n");
        means().forEach((k, v) -> row(sb, "gantry " + k, v));
        published.forEach((k, v) -> row(sb, "paper " + k, v));
        for (FgdReplay.Curve c : curves) {
            sb.append(String.format(Locale.ROOT, "  run %s %s seed %d: %d pods, %d failed, %d windows, solve %.1f ms/window, wall %.1f s%n",
                    c.policy(), c.mode(), c.seed(), c.arrivedPods(), c.failedPods(), c.windows(), c.solveMillisMean(), c.wallMillis() / 1000.0));
        }
        return sb.toString();
    }

    private static void row(StringBuilder sb, String label, double[] v) {
        sb.append(String.format(Locale.ROOT, "%-26s", label));
        for (int p : POINTS) {
            sb.append(String.format(Locale.ROOT, " %6.2f", v[p]));
        }
        sb.append(String.format(Locale.ROOT, "  %6.2f%n", 100 - v[100]));
    }

    public String html() {
        StringBuilder b = new StringBuilder();
        Html.head(b, "Gantry simulation: OpenB (FGD protocol)");
        b.append("<h1>OpenB replay, FGD protocol</h1>\n");
        Html.runTable(b, run);
        b.append("<p><b>online</b> = one pod per scheduling window, nothing moves (the paper's setting); <b>batched</b> = several arrivals per window")
                .append(" (the planner may order them; with --migrate it may also move placed pods). <b>paper</b> rows are the published results")
                .append(" of the FGD simulator (mean over its seeds).</p>\n");
        b.append("<pre>").append(Html.esc(summary())).append("</pre>\n");
        Map<String, double[][]> lines = Charts.ordered();
        double[] x = new double[131];
        for (int i = 0; i < 131; i++) {
            x[i] = i;
        }
        means().forEach((k, v) -> lines.put("gantry " + k, new double[][] {x, v}));
        published.forEach((k, v) -> {
            if (k.contains("FGD") || k.contains("BestFit") || k.contains("Random")) {
                lines.put("paper " + k, new double[][] {x, v});
            }
        });
        Html.img(b, Charts.lines("GPU allocation vs arrived workload", "arrived GPU demand (% of capacity)", "GPUs allocated (% of capacity)", lines,
                false, 100.0));
        Map<String, Double> at100 = Charts.ordered();
        means().forEach((k, v) -> at100.put(k, v[100]));
        published.forEach((k, v) -> at100.put("paper " + k.replaceFirst("^\\d+-", ""), v[100]));
        Html.img(b, Charts.bars("Allocation at 100% arrived (ceiling 100%)", "%", at100, 100.0, "ceiling"));
        Html.tail(b);
        return b.toString();
    }
}
