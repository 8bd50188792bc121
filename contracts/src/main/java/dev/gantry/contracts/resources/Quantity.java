package dev.gantry.contracts.resources;

import java.math.BigDecimal;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Kubernetes resource quantities ({@code "500m"}, {@code "4"}, {@code "64Gi"}, {@code "1.5G"}) read
 * into the units Gantry counts in: CPU millicores and memory MiB.
 */
public final class Quantity {

    private static final Pattern FORM = Pattern.compile("([0-9]+(?:\\.[0-9]+)?)([a-zA-Z]*)");
    private static final Map<String, BigDecimal> BYTES_PER_SUFFIX = Map.ofEntries(
            Map.entry("", BigDecimal.ONE),
            Map.entry("k", BigDecimal.TEN.pow(3)), Map.entry("M", BigDecimal.TEN.pow(6)),
            Map.entry("G", BigDecimal.TEN.pow(9)), Map.entry("T", BigDecimal.TEN.pow(12)),
            Map.entry("P", BigDecimal.TEN.pow(15)),
            Map.entry("Ki", BigDecimal.valueOf(2).pow(10)), Map.entry("Mi", BigDecimal.valueOf(2).pow(20)),
            Map.entry("Gi", BigDecimal.valueOf(2).pow(30)), Map.entry("Ti", BigDecimal.valueOf(2).pow(40)),
            Map.entry("Pi", BigDecimal.valueOf(2).pow(50)));
    private static final BigDecimal MIB = BigDecimal.valueOf(2).pow(20);

    private Quantity() {
    }

    /** CPU: {@code "500m"} is 500, {@code "4"} is 4000, {@code "0.5"} is 500 millicores. */
    public static long cpuMillis(String quantity) {
        Matcher m = match(quantity);
        BigDecimal number = new BigDecimal(m.group(1));
        return switch (m.group(2)) {
            case "m" -> number.setScale(0, java.math.RoundingMode.CEILING).longValueExact();
            case "" -> number.movePointRight(3).setScale(0, java.math.RoundingMode.CEILING).longValueExact();
            default -> throw new IllegalArgumentException("'" + quantity + "' is not a CPU quantity (e.g. 500m or 4)");
        };
    }

    /** Memory in MiB, rounded up: {@code "64Gi"} is 65536, {@code "1G"} is 954. */
    public static long memoryMiB(String quantity) {
        Matcher m = match(quantity);
        BigDecimal perUnit = BYTES_PER_SUFFIX.get(m.group(2));
        if (perUnit == null) {
            throw new IllegalArgumentException("'" + quantity + "' is not a memory quantity (e.g. 512Mi, 64Gi, 1G)");
        }
        return new BigDecimal(m.group(1)).multiply(perUnit).divide(MIB, 0, java.math.RoundingMode.CEILING).longValueExact();
    }

    /** A whole count such as {@code nvidia.com/gpu: 2}. */
    public static int count(String quantity) {
        Matcher m = match(quantity);
        if (!m.group(2).isEmpty() || m.group(1).contains(".")) {
            throw new IllegalArgumentException("'" + quantity + "' is not a whole number");
        }
        return Integer.parseInt(m.group(1));
    }

    private static Matcher match(String quantity) {
        Matcher m = FORM.matcher(quantity == null ? "" : quantity.trim());
        if (!m.matches()) {
            throw new IllegalArgumentException("'" + quantity + "' is not a Kubernetes quantity");
        }
        return m;
    }
}
