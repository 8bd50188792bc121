package dev.gantry.simulator.cli;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/** {@code --name value} and {@code --flag} options; anything unknown or missing is a {@link UsageException}. */
final class Args {
    private final Map<String, String> values = new HashMap<>();

    Args(String[] argv, int from, Set<String> withValue, Set<String> flags) {
        for (int i = from; i < argv.length; i++) {
            String a = argv[i];
            if (flags.contains(a)) {
                values.put(a, "true");
            } else if (withValue.contains(a)) {
                if (i + 1 >= argv.length || argv[i + 1].startsWith("--")) {
                    throw new UsageException(a + " needs a value");
                }
                if (values.put(a, argv[++i]) != null) {
                    throw new UsageException(a + " given twice");
                }
            } else {
                throw new UsageException("unknown option " + a + " (options: " + String.join(" ", List.copyOf(withValue)) + " "
                        + String.join(" ", List.copyOf(flags)) + ")");
            }
        }
    }

    String get(String name, String dflt) {
        return values.getOrDefault(name, dflt);
    }

    String required(String name) {
        String v = values.get(name);
        if (v == null) {
            throw new UsageException(name + " is required");
        }
        return v;
    }

    boolean flag(String name) {
        return values.containsKey(name);
    }
}
