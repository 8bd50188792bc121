package dev.gantry.inventory.domain;

import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;

/**
 * The text form of GPU groups (NVLink islands, NUMA groups) used in Kubernetes annotations
 * ({@code gantry.dev/nvlink-islands}, {@code gantry.dev/numa}): groups separated by {@code ;} (or
 * {@code |}), GPU indices in a group by {@code ,}, with {@code a-b} for a range; blanks are ignored.
 * {@code "0-3;4-7"} and {@code "0,1,2,3|4,5,6,7"} are the same two groups; {@code ""} is none.
 */
public final class GpuGroups {

    private GpuGroups() {
    }

    /** Parses the text form; throws {@link IllegalArgumentException} with a message for a person. */
    public static List<List<Integer>> parse(String text) {
        List<List<Integer>> groups = new ArrayList<>();
        if (text == null || text.isBlank()) {
            return groups;
        }
        String[] parts = text.replace(" ", "").replace("\t", "").split("[;|]", -1);
        for (int g = 0; g < parts.length; g++) {
            if (parts[g].isEmpty()) {
                throw new IllegalArgumentException("group " + (g + 1) + " is empty in '" + text + "'");
            }
            List<Integer> group = new ArrayList<>();
            for (String member : parts[g].split(",", -1)) {
                int dash = member.indexOf('-', 1);
                if (dash > 0) {
                    int from = index(member.substring(0, dash), text);
                    int to = index(member.substring(dash + 1), text);
                    if (to < from || to - from > 1024) {
                        throw new IllegalArgumentException("range '" + member + "' is not ascending in '" + text + "'");
                    }
                    for (int i = from; i <= to; i++) {
                        group.add(i);
                    }
                } else {
                    group.add(index(member, text));
                }
            }
            groups.add(List.copyOf(group));
        }
        return List.copyOf(groups);
    }

    /** The canonical text form: ascending runs of three or more as ranges ({@code 0-3;4,5}). */
    public static String format(List<List<Integer>> groups) {
        return groups.stream().map(GpuGroups::formatGroup).collect(Collectors.joining(";"));
    }

    private static String formatGroup(List<Integer> group) {
        List<String> parts = new ArrayList<>();
        int i = 0;
        while (i < group.size()) {
            int j = i;
            while (j + 1 < group.size() && group.get(j + 1) == group.get(j) + 1) {
                j++;
            }
            if (j - i >= 2) {
                parts.add(group.get(i) + "-" + group.get(j));
            } else {
                for (int k = i; k <= j; k++) {
                    parts.add(String.valueOf(group.get(k)));
                }
            }
            i = j + 1;
        }
        return String.join(",", parts);
    }

    private static int index(String token, String text) {
        if (token.isEmpty() || token.length() > 4 || !token.chars().allMatch(Character::isDigit)) {
            throw new IllegalArgumentException("'" + token + "' is not a GPU index in '" + text + "'");
        }
        return Integer.parseInt(token);
    }
}
