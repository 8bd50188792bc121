package dev.gantry.placement.window;

import java.time.LocalTime;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.List;

/**
 * The hours of the day at which scheduled consolidation may run ({@code gantry.placement.consolidation.hours}):
 * {@code HH:MM-HH:MM} ranges separated by commas, start included, end excluded; a range whose end is
 * before its start runs over midnight ({@code 22:00-04:00}); {@code 24:00} is the end of the day.
 */
public record ConsolidationHours(List<Range> ranges) {

    public record Range(LocalTime from, LocalTime to, boolean toMidnight) {
        boolean contains(LocalTime t) {
            if (toMidnight) {
                return !t.isBefore(from);
            }
            return from.isBefore(to) ? !t.isBefore(from) && t.isBefore(to) : !t.isBefore(from) || t.isBefore(to);
        }

        @Override
        public String toString() {
            return from + "-" + (toMidnight ? "24:00" : to.toString());
        }
    }

    public ConsolidationHours {
        ranges = List.copyOf(ranges);
    }

    public boolean contains(LocalTime t) {
        return ranges.stream().anyMatch(r -> r.contains(t));
    }

    /** @throws IllegalArgumentException naming the key and the bad range */
    public static ConsolidationHours parse(String text) {
        List<Range> ranges = new ArrayList<>();
        for (String part : (text == null ? "" : text).split(",")) {
            if (part.isBlank()) {
                continue;
            }
            String[] ends = part.trim().split("-");
            try {
                if (ends.length != 2) {
                    throw new DateTimeParseException("no dash", part, 0);
                }
                LocalTime from = LocalTime.parse(ends[0].trim());
                boolean toMidnight = ends[1].trim().equals("24:00");
                LocalTime to = toMidnight ? LocalTime.MIDNIGHT : LocalTime.parse(ends[1].trim());
                if (!toMidnight && from.equals(to)) {
                    throw new DateTimeParseException("empty", part, 0);
                }
                ranges.add(new Range(from, to, toMidnight));
            } catch (DateTimeParseException e) {
                throw new IllegalArgumentException("gantry.placement.consolidation.hours: expected HH:MM-HH:MM ranges (like 01:00-05:00), got \""
                        + part.trim() + "\"");
            }
        }
        if (ranges.isEmpty()) {
            throw new IllegalArgumentException("gantry.placement.consolidation.hours: no hours given (like 01:00-05:00)");
        }
        return new ConsolidationHours(ranges);
    }

    @Override
    public String toString() {
        return String.join(",", ranges.stream().map(Range::toString).toList());
    }
}
