package dev.gantry.quota.domain;

/**
 * A point in the three resource dimensions fair share works on (GPUs, CPU millicores, memory
 * MiB), as real numbers: shares are fractional before anyone rounds them.
 */
public record Amounts(double gpus, double cpuMillis, double memoryMiB) {

    public static final int DIMENSIONS = 3;
    public static final Amounts ZERO = new Amounts(0, 0, 0);
    public static final String[] NAMES = {"gpus", "cpuMillis", "memoryMiB"};
    public static final String[] UNITS = {"GPUs", "CPU millicores", "MiB of memory"};

    public double get(int dimension) {
        return switch (dimension) {
            case 0 -> gpus;
            case 1 -> cpuMillis;
            case 2 -> memoryMiB;
            default -> throw new IndexOutOfBoundsException(dimension);
        };
    }

    public static Amounts of(double[] values) {
        return new Amounts(values[0], values[1], values[2]);
    }

    public double[] toArray() {
        return new double[] {gpus, cpuMillis, memoryMiB};
    }

    public Amounts plus(Amounts other) {
        return new Amounts(gpus + other.gpus, cpuMillis + other.cpuMillis, memoryMiB + other.memoryMiB);
    }

    public Amounts minusFloorZero(Amounts other) {
        return new Amounts(Math.max(0, gpus - other.gpus), Math.max(0, cpuMillis - other.cpuMillis),
                Math.max(0, memoryMiB - other.memoryMiB));
    }

    public Amounts min(Amounts other) {
        return new Amounts(Math.min(gpus, other.gpus), Math.min(cpuMillis, other.cpuMillis), Math.min(memoryMiB, other.memoryMiB));
    }

    public boolean isZero() {
        return gpus == 0 && cpuMillis == 0 && memoryMiB == 0;
    }

    /** Rounded to three decimals, for display and publication. */
    public static double round(double value) {
        return Math.round(value * 1000) / 1000.0;
    }
}
