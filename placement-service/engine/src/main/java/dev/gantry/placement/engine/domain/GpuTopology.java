package dev.gantry.placement.engine.domain;

import java.util.Locale;

/** Where a replica's GPUs must lie on its node: one NVLink island, one NUMA node, or anywhere. */
public enum GpuTopology {
    ANY, NVLINK, NUMA;

    public String jsonName() {
        return name().toLowerCase(Locale.ROOT);
    }

    public static GpuTopology parse(String s) {
        for (GpuTopology t : values()) {
            if (t.jsonName().equals(s)) {
                return t;
            }
        }
        throw new IllegalArgumentException("must be one of nvlink, numa, any");
    }
}
