package dev.gantry.contracts.resources;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Kubernetes resource quantities ({@code "500m"}, {@code "4"}, {@code "64Gi"}, {@code "1.5G"},
 * {@code "2e3"}) read into Gantry's integer units: CPU in millicores, memory in MiB. Like
 * Kubernetes, a fraction of the smallest unit is rounded up (0.0001 CPU is 1m).
 */
public final class Quantity {

    private static final Pattern FORMAT = Pattern.compile("^([+]?(?:\\d+\\.?\\d*|\\.\\d+))(?:([eE][+-]?\\d+)|(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E))?$");

    private static final Map<String, BigDecimal> SUFFIX = Map.ofEntries(
            Map.entry("Ki", BigDecimal.valueOf(1024L)),
            Map.entry("Mi", BigDecimal.valueOf(1024L * 1024)),
            Map.entry("Gi", BigDecimal.valueOf(1024L * 1024 * 1024)),
            Map.entry("Ti", BigDecimal.valueOf(1024L * 1024 * 1024 * 1024)),
            Map.entry("Pi", BigDecimal.valueOf(1024L * 1024 * 1024 * 1024 * 1024)),
            Map.entry("Ei", BigDecimal.valueOf(1024L * 1024 * 1024 * 1024 * 1024 * 1024)),
            Map.entry("n", new BigDecimal("1e-9")),
            Map.entry("u", new BigDecimal("1e-6")),
            Map.entry("m", new BigDecimal("1e-3")),
            Map.entry("k", new BigDecimal("1e3")),
            Map.entry("M", new BigDecimal("1e6")),
            Map.entry("G", new BigDecimal("1e9")),
            Map.entry("T", new BigDecimal("1e12")),
            Map.entry("P", new BigDecimal("1e15")),
            Map.entry("E", new BigDecimal("1e18")));

    private static final BigDecimal MIB = BigDecimal.valueOf(1024L * 1024);
    private static final BigDecimal THOUSAND = BigDecimal.valueOf(1000);

    private Quantity() {
    }

    /** The quantity in base units (cores, bytes, GPUs); throws {@link IllegalArgumentException} when it is not a quantity. */
    public static BigDecimal parse(String text) {
        if (text == null || text.isBlank()) {
            throw new IllegalArgumentException("empty quantity");
        }
        Matcher m = FORMAT.matcher(text.trim());
        if (!m.matches()) {
            throw new IllegalArgumentException("'" + text + "' is not a Kubernetes quantity (e.g. 500m, 4, 64Gi, 1.5G)");
        }
        BigDecimal number = new BigDecimal(m.group(1));
        if (m.group(2) != null) {
            return number.scaleByPowerOfTen(Integer.parseInt(m.group(2).substring(1).replace("+", "")));
        }
        return m.group(3) == null ? number : number.multiply(SUFFIX.get(m.group(3)));
    }

    /** CPU quantity in millicores, rounded up: "500m" is 500, "4" is 4000, "0.25" is 250. */
    public static long cpuMillis(String text) {
        return parse(text).multiply(THOUSAND).setScale(0, RoundingMode.CEILING).longValueExact();
    }

    /** Memory quantity in MiB, rounded up: "64Gi" is 65536, "512Mi" is 512, "1G" is 954. */
    public static long memoryMiB(String text) {
        return parse(text).divide(MIB, 0, RoundingMode.CEILING).longValueExact();
    }

    /** A whole count (GPUs): "8" is 8; "1.5" or "500m" is refused, GPUs are not divisible here. */
    public static int wholeCount(String text) {
        BigDecimal value = parse(text);
        try {
            return value.stripTrailingZeros().intValueExact();
        } catch (ArithmeticException e) {
            throw new IllegalArgumentException("'" + text + "' is not a whole number");
        }
    }
}
