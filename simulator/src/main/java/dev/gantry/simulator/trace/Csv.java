package dev.gantry.simulator.trace;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** A header-first CSV without quoting (every trace here is that simple), read whole. */
public final class Csv {
    private final Path file;
    private final Map<String, Integer> columns = new HashMap<>();
    private final List<String[]> rows = new ArrayList<>();
    private final List<Integer> lineNumbers = new ArrayList<>();

    private Csv(Path file) {
        this.file = file;
    }

    public static Csv read(Path file) {
        Csv csv = new Csv(file);
        List<String> lines;
        try {
            lines = Files.readAllLines(file);
        } catch (IOException e) {
            throw new TraceFormatException("cannot read " + file + ": " + e.getMessage());
        }
        if (lines.isEmpty()) {
            throw new TraceFormatException(file + ": empty file (a header line is needed)");
        }
        String[] header = lines.getFirst().trim().split(",", -1);
        for (int i = 0; i < header.length; i++) {
            csv.columns.put(header[i].trim(), i);
        }
        for (int i = 1; i < lines.size(); i++) {
            String line = lines.get(i);
            if (line.isBlank()) {
                continue;
            }
            csv.rows.add(line.split(",", -1));
            csv.lineNumbers.add(i + 1);
        }
        return csv;
    }

    public int size() {
        return rows.size();
    }

    public boolean has(String column) {
        return columns.containsKey(column);
    }

    public void require(String... names) {
        for (String n : names) {
            if (!columns.containsKey(n)) {
                throw new TraceFormatException(file + ": missing column " + n + " (header has " + String.join(",", columns.keySet()) + ")");
            }
        }
    }

    public String get(int row, String column) {
        Integer c = columns.get(column);
        String[] r = rows.get(row);
        return c == null || c >= r.length ? "" : r[c].trim();
    }

    public long longOf(int row, String column) {
        String v = get(row, column);
        try {
            return Math.round(Double.parseDouble(v));
        } catch (NumberFormatException e) {
            throw error(row, column, "not a number: '" + v + "'");
        }
    }

    public TraceFormatException error(int row, String column, String message) {
        return new TraceFormatException(file + " line " + lineNumbers.get(row) + ", " + column + ": " + message);
    }
}
