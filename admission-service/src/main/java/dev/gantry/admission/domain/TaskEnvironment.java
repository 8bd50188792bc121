package dev.gantry.admission.domain;

import dev.gantry.contracts.validation.FieldViolation;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * The rules for a task group's {@code workingDir} and {@code env}: what a node agent can pass to a
 * process safely (no NUL, no way out of the path with {@code ..}), bounded in size, and without the
 * variables Gantry itself sets for each task (its GPUs, its place in the gang, its checkpoint
 * directory), which a job may not override.
 */
public final class TaskEnvironment {

    public static final int MAX_VARIABLES = 64;
    public static final int MAX_NAME_CHARS = 128;
    public static final int MAX_VALUE_CHARS = 4096;
    public static final int MAX_TOTAL_CHARS = 32 * 1024;
    public static final int MAX_PATH_CHARS = 1024;
    private static final Pattern NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");
    /** Set by the node agent for every task (node-agent/README.md). */
    static final Set<String> RESERVED = Set.of("CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES", "MASTER_ADDR", "MASTER_PORT",
            "WORLD_SIZE", "RANK", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "NODE_RANK");

    private TaskEnvironment() {
    }

    static void check(List<FieldViolation> errors, String at, String workingDir, Map<String, String> env) {
        if (workingDir != null) {
            String field = at + ".workingDir";
            if (!workingDir.startsWith("/")) {
                errors.add(new FieldViolation(field, "must be an absolute path"));
            } else if (workingDir.length() > MAX_PATH_CHARS) {
                errors.add(new FieldViolation(field, "must be at most " + MAX_PATH_CHARS + " characters"));
            } else if (workingDir.chars().anyMatch(c -> c == 0 || c == '\n' || c == '\r')) {
                errors.add(new FieldViolation(field, "may not hold NUL or line breaks"));
            } else if (List.of(workingDir.split("/")).contains("..")) {
                errors.add(new FieldViolation(field, "may not hold a .. segment"));
            }
        }
        if (env == null) {
            return;
        }
        String field = at + ".env";
        if (env.size() > MAX_VARIABLES) {
            errors.add(new FieldViolation(field, "at most " + MAX_VARIABLES + " variables, not " + env.size()));
            return;
        }
        long total = 0;
        for (Map.Entry<String, String> e : env.entrySet()) {
            String name = e.getKey();
            String value = e.getValue() == null ? "" : e.getValue();
            total += name.length() + value.length();
            if (name.length() > MAX_NAME_CHARS || !NAME.matcher(name).matches()) {
                errors.add(new FieldViolation(field, "'" + abbreviate(name) + "' is not a variable name (letters, digits, _; "
                        + "not starting with a digit; at most " + MAX_NAME_CHARS + " characters)"));
            } else if (RESERVED.contains(name) || name.startsWith("GANTRY_")) {
                errors.add(new FieldViolation(field + "." + name, "is set by Gantry for each task and may not be given"));
            } else if (value.length() > MAX_VALUE_CHARS) {
                errors.add(new FieldViolation(field + "." + name, "must be at most " + MAX_VALUE_CHARS + " characters"));
            } else if (value.indexOf(0) >= 0) {
                errors.add(new FieldViolation(field + "." + name, "may not hold NUL"));
            }
        }
        if (total > MAX_TOTAL_CHARS) {
            errors.add(new FieldViolation(field, "names and values together must be at most " + MAX_TOTAL_CHARS + " characters"));
        }
    }

    private static String abbreviate(String s) {
        String printable = s.replaceAll("[^\\x20-\\x7e]", "?");
        return printable.length() <= 40 ? printable : printable.substring(0, 40) + "...";
    }
}
