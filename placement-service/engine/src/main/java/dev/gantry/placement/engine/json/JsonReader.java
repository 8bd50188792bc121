package dev.gantry.placement.engine.json;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BiFunction;

/**
 * Typed field access on a Jackson tree that records a {@link Violation} with the field path
 * instead of throwing, so one pass reports every broken field.
 */
final class JsonReader {
    final List<Violation> violations = new ArrayList<>();

    void bad(String path, String message) {
        violations.add(new Violation(path, message));
    }

    static String at(String path, String field) {
        return path.isEmpty() ? field : path + "." + field;
    }

    /** A field that is absent or JSON null. */
    static boolean absent(JsonNode obj, String field) {
        JsonNode v = obj.get(field);
        return v == null || v.isNull();
    }

    String string(JsonNode obj, String path, String field, String dflt) {
        if (absent(obj, field)) {
            return dflt;
        }
        JsonNode v = obj.get(field);
        if (!v.isTextual()) {
            bad(at(path, field), "must be a string");
            return dflt;
        }
        return v.asText();
    }

    String requiredString(JsonNode obj, String path, String field) {
        if (absent(obj, field)) {
            bad(at(path, field), "is required");
            return null;
        }
        return string(obj, path, field, null);
    }

    long longIn(JsonNode obj, String path, String field, long dflt, long min, long max) {
        if (absent(obj, field)) {
            return dflt;
        }
        JsonNode v = obj.get(field);
        if (!v.isIntegralNumber() && !(v.isNumber() && v.asDouble() == Math.rint(v.asDouble()))) {
            bad(at(path, field), "must be an integer");
            return dflt;
        }
        if (!v.canConvertToLong()) {
            bad(at(path, field), "must be " + range(min, max));
            return dflt;
        }
        long x = v.asLong();
        if (x < min || x > max) {
            bad(at(path, field), "must be " + range(min, max));
            return dflt;
        }
        return x;
    }

    Long optionalLong(JsonNode obj, String path, String field, long min, long max) {
        if (absent(obj, field)) {
            return null;
        }
        int before = violations.size();
        long x = longIn(obj, path, field, 0, min, max);
        return violations.size() == before ? x : null;
    }

    int intIn(JsonNode obj, String path, String field, int dflt, long min, long max) {
        return (int) longIn(obj, path, field, dflt, min, max);
    }

    double positiveNumber(JsonNode obj, String path, String field, double dflt) {
        if (absent(obj, field)) {
            return dflt;
        }
        JsonNode v = obj.get(field);
        if (!v.isNumber() || !(v.asDouble() > 0) || Double.isInfinite(v.asDouble())) {
            bad(at(path, field), "must be a number > 0");
            return dflt;
        }
        return v.asDouble();
    }

    boolean bool(JsonNode obj, String path, String field, boolean dflt) {
        if (absent(obj, field)) {
            return dflt;
        }
        JsonNode v = obj.get(field);
        if (!v.isBoolean()) {
            bad(at(path, field), "must be true or false");
            return dflt;
        }
        return v.asBoolean();
    }

    /** Elements of an array field, each read by {@code element(node, path)}; absent = empty. */
    <T> List<T> array(JsonNode obj, String path, String field, BiFunction<JsonNode, String, T> element) {
        List<T> out = new ArrayList<>();
        if (absent(obj, field)) {
            return out;
        }
        JsonNode v = obj.get(field);
        if (!v.isArray()) {
            bad(at(path, field), "must be an array");
            return out;
        }
        for (int i = 0; i < v.size(); i++) {
            T t = element.apply(v.get(i), at(path, field) + "[" + i + "]");
            if (t != null) {
                out.add(t);
            }
        }
        return out;
    }

    /** Null when the field is absent (the caller's default applies). */
    <T> List<T> optionalArray(JsonNode obj, String path, String field, BiFunction<JsonNode, String, T> element) {
        return absent(obj, field) ? null : array(obj, path, field, element);
    }

    JsonNode object(JsonNode v, String path) {
        if (v == null || !v.isObject()) {
            bad(path, "must be an object");
            return null;
        }
        return v;
    }

    Map<String, String> stringMap(JsonNode obj, String path, String field) {
        Map<String, String> out = new LinkedHashMap<>();
        if (absent(obj, field)) {
            return out;
        }
        JsonNode v = obj.get(field);
        if (!v.isObject()) {
            bad(at(path, field), "must be an object of strings");
            return out;
        }
        for (var it = v.properties().iterator(); it.hasNext(); ) {
            var e = it.next();
            if (!e.getValue().isTextual()) {
                bad(at(path, field) + "." + e.getKey(), "must be a string");
            } else {
                out.put(e.getKey(), e.getValue().asText());
            }
        }
        return out;
    }

    Integer intElement(JsonNode v, String path, int min, int max) {
        if (v == null || !v.isIntegralNumber() || !v.canConvertToInt() || v.asInt() < min || v.asInt() > max) {
            bad(path, "must be an integer " + range(min, max));
            return null;
        }
        return v.asInt();
    }

    String stringElement(JsonNode v, String path) {
        if (v == null || !v.isTextual()) {
            bad(path, "must be a string");
            return null;
        }
        return v.asText();
    }

    private static String range(long min, long max) {
        if (max == Long.MAX_VALUE || max == Integer.MAX_VALUE && min != Integer.MIN_VALUE) {
            return ">= " + min;
        }
        if (min == Integer.MIN_VALUE && max == Integer.MAX_VALUE) {
            return "a 32-bit integer";
        }
        return min + ".." + max;
    }
}
