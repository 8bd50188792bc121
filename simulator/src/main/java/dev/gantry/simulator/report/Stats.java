package dev.gantry.simulator.report;

import java.util.Arrays;
import java.util.List;

/** Mean and nearest-rank percentiles of a sample. */
public final class Stats {
    private Stats() {
    }

    public static double mean(double[] v) {
        return v.length == 0 ? 0 : Arrays.stream(v).sum() / v.length;
    }

    /** Nearest-rank percentile (p in 0..100) of an unsorted sample; 0 for an empty one. */
    public static double percentile(double[] v, double p) {
        if (v.length == 0) {
            return 0;
        }
        double[] s = v.clone();
        Arrays.sort(s);
        int rank = (int) Math.ceil(p / 100.0 * s.length);
        return s[Math.max(0, Math.min(s.length - 1, rank - 1))];
    }

    public static double[] ofLongs(List<Long> v) {
        return v.stream().mapToDouble(Long::doubleValue).toArray();
    }

    public static double[] ofInts(List<Integer> v) {
        return v.stream().mapToDouble(Integer::doubleValue).toArray();
    }
}
