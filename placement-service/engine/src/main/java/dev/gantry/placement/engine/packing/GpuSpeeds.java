package dev.gantry.placement.engine.packing;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * Relative training speed of GPU models (V100 = 1.0), so that among placements the workload sees
 * as equal a job without a model constraint gets the faster GPUs (Gavel, OSDI '20: heterogeneity
 * matters by up to 3.5x in job completion time).
 *
 * <p>The defaults are rounded, order-of-magnitude figures for mixed-precision training
 * throughput, normalised to V100, as published by Lambda's "Deep Learning GPU Benchmarks"
 * (PyTorch training, 2022/2023 pages) and, for K80/P100/V100, Gavel's measured throughputs. They
 * are not measurements of ours, they vary with the model trained, and a site should set its own
 * ({@code gantry.placement.gpu-speeds}). A model is matched by its name or the longest
 * {@code -}-separated prefix of it ({@code A100-SXM4-80GB} -> {@code A100-SXM4} -> {@code A100});
 * a model the table does not know counts as 1.0.
 */
public final class GpuSpeeds {
    /** Used for models the table does not name. */
    public static final double UNKNOWN = 1.0;

    private static final Map<String, Double> DEFAULTS = defaults();

    /** The default table. */
    public static final GpuSpeeds DEFAULT = new GpuSpeeds(DEFAULTS);
    /** Every model equal: no speed preference (the baselines, and FGD's protocol where only allocation counts). */
    public static final GpuSpeeds NONE = new GpuSpeeds(Map.of());

    private final Map<String, Double> table;
    private final double fastest;

    private GpuSpeeds(Map<String, Double> table) {
        this.table = Collections.unmodifiableMap(new LinkedHashMap<>(table));
        this.fastest = table.values().stream().mapToDouble(Double::doubleValue).max().orElse(UNKNOWN);
    }

    private static Map<String, Double> defaults() {
        Map<String, Double> m = new LinkedHashMap<>();
        m.put("K80", 0.15);
        m.put("P100", 0.45);
        m.put("T4", 0.3);
        m.put("P4", 0.2);
        m.put("V100", 1.0);
        m.put("A10", 0.7);
        m.put("A10G", 0.7);
        m.put("A30", 1.1);
        m.put("A40", 1.2);
        m.put("L4", 0.6);
        m.put("L40", 1.4);
        m.put("L40S", 1.7);
        m.put("A100", 2.0);
        m.put("H100", 3.5);
        m.put("H200", 4.0);
        return m;
    }

    /**
     * The default table with {@code spec}'s entries over it: {@code MODEL=SPEED,...}
     * (e.g. {@code A100=2.2,G2=0.8}); {@code none} for no preference; blank for the defaults.
     *
     * @throws IllegalArgumentException naming the bad entry
     */
    public static GpuSpeeds parse(String spec) {
        if (spec == null || spec.isBlank() || spec.trim().equalsIgnoreCase("default")) {
            return DEFAULT;
        }
        if (spec.trim().equalsIgnoreCase("none")) {
            return NONE;
        }
        Map<String, Double> m = new LinkedHashMap<>(DEFAULTS);
        for (String entry : spec.split(",")) {
            String e = entry.trim();
            int eq = e.indexOf('=');
            if (eq <= 0 || eq == e.length() - 1) {
                throw new IllegalArgumentException("GPU speed \"" + e + "\": expected MODEL=SPEED (e.g. A100=2.0)");
            }
            double speed;
            try {
                speed = Double.parseDouble(e.substring(eq + 1).trim());
            } catch (NumberFormatException ex) {
                throw new IllegalArgumentException("GPU speed \"" + e + "\": " + e.substring(eq + 1).trim() + " is not a number");
            }
            if (!(speed > 0) || speed > 100) {
                throw new IllegalArgumentException("GPU speed \"" + e + "\": must be above 0 and at most 100");
            }
            m.put(e.substring(0, eq).trim().toUpperCase(Locale.ROOT), speed);
        }
        return new GpuSpeeds(m);
    }

    /** The model's relative speed; {@link #UNKNOWN} for a model the table does not name (or a null model). */
    public double of(String model) {
        if (table.isEmpty() || model == null) {
            return UNKNOWN;
        }
        String name = model.trim().toUpperCase(Locale.ROOT);
        while (true) {
            Double s = table.get(name);
            if (s != null) {
                return s;
            }
            int dash = name.lastIndexOf('-');
            if (dash <= 0) {
                return UNKNOWN;
            }
            name = name.substring(0, dash);
        }
    }

    /** How much slower than the table's fastest model, in hundredths (0 for the fastest; 0 for every model of {@link #NONE}). */
    public int slownessCentis(String model) {
        return table.isEmpty() ? 0 : (int) Math.max(0, Math.round((fastest - of(model)) * 100));
    }

    /** True when no model is preferred over another. */
    public boolean isNone() {
        return table.isEmpty();
    }

    public Map<String, Double> table() {
        return table;
    }
}
