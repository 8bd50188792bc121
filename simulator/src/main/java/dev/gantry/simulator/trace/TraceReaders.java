package dev.gantry.simulator.trace;

import dev.gantry.placement.engine.domain.NetworkLevel;
import dev.gantry.placement.engine.domain.TaskGroup;
import java.nio.file.Path;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/** Reads job-level traces into {@link TraceJob}s sorted by submission (ties by name). */
public final class TraceReaders {
    private static final DateTimeFormatter PHILLY_TIME = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss");

    private TraceReaders() {
    }

    /**
     * The processed Philly trace (timestamp, duration, num_gpus, gpu_time, cluster): one queue
     * per virtual cluster ({@code vc-<hash>}); times in epoch seconds (UTC). Jobs submitted in
     * {@code [from, to)} (null = unbounded).
     */
    public static List<TraceJob> philly(Path file, Long from, Long to) {
        Csv csv = Csv.read(file);
        csv.require("timestamp", "duration", "num_gpus", "cluster");
        List<TraceJob> jobs = new ArrayList<>();
        for (int i = 0; i < csv.size(); i++) {
            long submit;
            try {
                submit = LocalDateTime.parse(csv.get(i, "timestamp"), PHILLY_TIME).toEpochSecond(ZoneOffset.UTC);
            } catch (DateTimeParseException e) {
                throw csv.error(i, "timestamp", "not 'YYYY-MM-DD HH:MM:SS': '" + csv.get(i, "timestamp") + "'");
            }
            if (from != null && submit < from || to != null && submit >= to) {
                continue;
            }
            int gpus = (int) csv.longOf(i, "num_gpus");
            long duration = Math.max(1, csv.longOf(i, "duration"));
            if (gpus <= 0) {
                continue; // CPU-only rows do not exist in this file; skip rather than invent a shape
            }
            jobs.add(new TraceJob("p-" + i, "vc-" + csv.get(i, "cluster"), 0, submit, duration, duration,
                    GangShapes.pods(gpus), List.of(), GangShapes.network(gpus, null)));
        }
        jobs.sort(Comparator.comparingLong(TraceJob::submitSeconds).thenComparing(TraceJob::name));
        return jobs;
    }

    /**
     * Alibaba's OpenB pod list replayed with its times (the FGD protocol ignores them): each pod is a
     * one-pod job that arrives at {@code creation_time} and runs until {@code deletion_time} (at least
     * 1 s), with its CPU, memory and GPUs (a share of one GPU when {@code gpu_milli} is below 1000; no
     * GPU for CPU-only pods) and its {@code gpu_spec} models. Pods created in {@code [from, to)}, and
     * with {@code from} the pods still running then (created before, deleted after), arriving at
     * {@code from} for the rest of their run: the slice starts on the cluster as it was, not empty.
     */
    public static List<TraceJob> openbTimed(Path file, Long from, Long to) {
        Csv csv = Csv.read(file);
        csv.require("name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli", "creation_time", "deletion_time");
        List<OpenbTrace.Pod> pods = OpenbTrace.read(file);
        List<TraceJob> jobs = new ArrayList<>();
        for (int i = 0; i < csv.size(); i++) {
            long created = csv.longOf(i, "creation_time");
            long deleted = csv.longOf(i, "deletion_time");
            if (from != null && created < from && deleted > from) {
                created = from; // running when the slice starts
            }
            if (from != null && created < from || to != null && created >= to) {
                continue;
            }
            long duration = Math.max(1, deleted - created);
            OpenbTrace.Pod p = pods.get(i);
            TaskGroup g = p.gpus() == 1 && p.gpuMilli() < 1000
                    ? new TaskGroup("pod", 1, 1, p.cpuMillis(), p.memoryMiB(), p.gpuMilli())
                    : new TaskGroup("pod", 1, p.gpus(), p.cpuMillis(), p.memoryMiB(), null);
            jobs.add(new TraceJob(p.name(), "default", 0, created, duration, duration, List.of(g), p.gpuSpec(), null));
        }
        jobs.sort(Comparator.comparingLong(TraceJob::submitSeconds).thenComparing(TraceJob::name));
        return jobs;
    }

    /**
     * Gantry's own CSV: {@code name,submit,duration,gpus} and optionally {@code queue} (default
     * {@code default}), {@code priority} (0), {@code estimate} (runtime estimate, default the
     * duration), {@code network} (required level: any|leaf|spine|zone|node). Times in seconds.
     */
    public static List<TraceJob> gantryCsv(Path file, Long from, Long to) {
        Csv csv = Csv.read(file);
        csv.require("name", "submit", "duration", "gpus");
        List<TraceJob> jobs = new ArrayList<>();
        for (int i = 0; i < csv.size(); i++) {
            long submit = csv.longOf(i, "submit");
            if (from != null && submit < from || to != null && submit >= to) {
                continue;
            }
            long duration = csv.longOf(i, "duration");
            if (duration <= 0) {
                throw csv.error(i, "duration", "must be > 0");
            }
            int gpus = (int) csv.longOf(i, "gpus");
            if (gpus <= 0) {
                throw csv.error(i, "gpus", "must be > 0");
            }
            String queue = csv.has("queue") && !csv.get(i, "queue").isEmpty() ? csv.get(i, "queue") : "default";
            int priority = csv.has("priority") && !csv.get(i, "priority").isEmpty() ? (int) csv.longOf(i, "priority") : 0;
            long estimate = csv.has("estimate") && !csv.get(i, "estimate").isEmpty() ? csv.longOf(i, "estimate") : duration;
            NetworkLevel required = NetworkLevel.ANY;
            if (csv.has("network") && !csv.get(i, "network").isEmpty()) {
                try {
                    required = NetworkLevel.parse(csv.get(i, "network"));
                } catch (IllegalArgumentException e) {
                    throw csv.error(i, "network", e.getMessage());
                }
            }
            List<TaskGroup> pods = GangShapes.pods(gpus);
            jobs.add(new TraceJob(csv.get(i, "name"), queue, priority, submit, duration, estimate, pods, List.of(),
                    GangShapes.network(gpus, required)));
        }
        jobs.sort(Comparator.comparingLong(TraceJob::submitSeconds).thenComparing(TraceJob::name));
        return jobs;
    }

    /** {@code 2017-10-02}, {@code 2017-10-02 08:00:00} (UTC) or plain seconds. */
    public static long parseTime(String text) {
        String t = text.trim();
        if (t.matches("-?\\d+")) {
            return Long.parseLong(t);
        }
        try {
            if (t.length() == 10) {
                return LocalDate.parse(t).atStartOfDay().toEpochSecond(ZoneOffset.UTC);
            }
            return LocalDateTime.parse(t.replace('T', ' '), PHILLY_TIME).toEpochSecond(ZoneOffset.UTC);
        } catch (DateTimeParseException e) {
            throw new IllegalArgumentException("bad time " + text + " (like 2017-10-02, '2017-10-02 08:00:00' or seconds)");
        }
    }
}
