package dev.gantry.admission.console;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The queues page: per queue its guarantee, deserved, allocated, borrowed and pending GPUs as bars
 * on one scale (the cluster's capacity, or the largest figure if larger), each with quota-service's
 * sentence for it; queues in tree order (children under their parent).
 */
public record QueueBoard(String capacity, String capacityReason, List<Row> rows) {

    public record Row(String name, int depth, String state, boolean reclaimable, String capability, String weight, List<Bar> bars,
            String usageReason) {
    }

    /** {@code percent} of the common scale; {@code kind} is also the CSS class. */
    public record Bar(String kind, String label, String gpus, int percent, String reason) {
    }

    public static QueueBoard of(List<QueuesClient.Status> statuses) {
        double scale = 1;
        String capacity = "unknown";
        String capacityReason = "";
        for (QueuesClient.Status s : statuses) {
            if (s.capacity() != null && s.capacity().gpus() != null) {
                scale = Math.max(scale, s.capacity().gpus());
                capacity = number(s.capacity().gpus());
                capacityReason = s.capacity().reason();
            }
            for (QueuesClient.Figure f : List.of(fig(s.guarantee()), fig(s.deserved()), fig(s.allocated()), fig(s.pending()))) {
                if (f.gpus() != null) {
                    scale = Math.max(scale, f.gpus());
                }
            }
        }
        Map<String, List<QueuesClient.Status>> children = new HashMap<>();
        List<QueuesClient.Status> roots = new ArrayList<>();
        Map<String, QueuesClient.Status> byName = new HashMap<>();
        statuses.forEach(s -> byName.put(s.queue(), s));
        for (QueuesClient.Status s : statuses) {
            if (s.parent() == null || !byName.containsKey(s.parent())) {
                roots.add(s);
            } else {
                children.computeIfAbsent(s.parent(), p -> new ArrayList<>()).add(s);
            }
        }
        List<Row> rows = new ArrayList<>();
        double finalScale = scale;
        roots.stream().sorted(Comparator.comparing(QueuesClient.Status::queue))
                .forEach(r -> addTree(r, 0, children, finalScale, rows));
        return new QueueBoard(capacity, capacityReason, rows);
    }

    private static void addTree(QueuesClient.Status s, int depth, Map<String, List<QueuesClient.Status>> children, double scale,
            List<Row> rows) {
        List<Bar> bars = List.of(
                bar("guarantee", "Guarantee", s.guarantee(), scale),
                bar("deserved", "Deserved", s.deserved(), scale),
                bar("allocated", "Allocated", s.allocated(), scale),
                bar("borrowed", "Borrowed", s.borrowed(), scale),
                bar("pending", "Pending", s.pending(), scale));
        String capability = s.capability() == null || s.capability().gpus() == null ? "unbounded" : number(s.capability().gpus()) + " GPUs";
        String weight = s.usage() == null ? "" : number(s.usage().weight())
                + (s.usage().effectiveWeight() != s.usage().weight() ? " (effective " + number(s.usage().effectiveWeight()) + ")" : "");
        rows.add(new Row(s.queue(), depth, s.state(), s.reclaimable(), capability, weight, bars,
                s.usage() == null ? "" : s.usage().reason()));
        children.getOrDefault(s.queue(), List.of()).stream().sorted(Comparator.comparing(QueuesClient.Status::queue))
                .forEach(c -> addTree(c, depth + 1, children, scale, rows));
    }

    private static QueuesClient.Figure fig(QueuesClient.Figure f) {
        return f == null ? new QueuesClient.Figure(null, "") : f;
    }

    private static Bar bar(String kind, String label, QueuesClient.Figure figure, double scale) {
        QueuesClient.Figure f = fig(figure);
        double gpus = f.gpus() == null ? 0 : f.gpus();
        int percent = (int) Math.round(Math.min(100, 100 * gpus / scale));
        return new Bar(kind, label, f.gpus() == null ? "–" : number(f.gpus()), percent, f.reason() == null ? "" : f.reason());
    }

    static String number(double v) {
        return v == Math.rint(v) ? String.valueOf((long) v) : String.format(Locale.ROOT, "%.2f", v).replaceAll("0+$", "");
    }
}
