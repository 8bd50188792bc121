package dev.gantry.placement.engine.packing;

import dev.gantry.placement.engine.domain.GpuTopology;
import dev.gantry.placement.engine.domain.MigProfiles;
import dev.gantry.placement.engine.domain.PendingJob;
import dev.gantry.placement.engine.domain.RunningTask;
import dev.gantry.placement.engine.domain.TaskGroup;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * One pod to place: whole GPUs ({@code gpus}) or a share of one ({@code milli} non-null), with the GPU
 * topology its indices must honour; or, with {@code migProfile} non-null, {@code gpus} MIG devices of that
 * profile (topology does not apply: a MIG device has no NVLink).
 */
public record Replica(String task, int gpus, Integer milli, long cpuMillis, long memoryMiB, GpuTopology topology, String migProfile) {

    /** Whole GPUs or a share. */
    public Replica(String task, int gpus, Integer milli, long cpuMillis, long memoryMiB, GpuTopology topology) {
        this(task, gpus, milli, cpuMillis, memoryMiB, topology, null);
    }

    /** Biggest first: a gang is packed from its hardest pods down, so small pods fill the gaps. */
    public static final Comparator<Replica> BIGGEST_FIRST = Comparator.comparingLong(Replica::gpuMilli).reversed()
            .thenComparing(Comparator.comparingLong(Replica::cpuMillis).reversed());

    /** GPUs in thousandths: whole GPUs, the share, or the MIG devices' slices of seven. */
    public long gpuMilli() {
        if (migProfile != null) {
            return (long) gpus * MigProfiles.milli(migProfile);
        }
        return milli == null ? 1000L * gpus : milli;
    }

    public boolean sharing() {
        return milli != null;
    }

    /** Whether the pod asks for MIG devices. */
    public boolean mig() {
        return migProfile != null;
    }

    /** The pods of a pending job, in {@link #BIGGEST_FIRST} order (stable on task order). */
    public static List<Replica> of(PendingJob job) {
        List<Replica> out = new ArrayList<>();
        for (TaskGroup g : job.taskGroups()) {
            for (int i = 0; i < g.replicas(); i++) {
                if (g.migProfile() != null) {
                    out.add(new Replica(g.name() + "-" + i, g.gpusPerReplica(), null, g.cpuMillis(), g.memoryMiB(), GpuTopology.ANY,
                            g.migProfile()));
                } else {
                    out.add(new Replica(g.name() + "-" + i, g.gpuMilli() == null ? g.gpusPerReplica() : 1, g.gpuMilli(),
                            g.cpuMillis(), g.memoryMiB(), job.gpuTopology()));
                }
            }
        }
        out.sort(BIGGEST_FIRST);
        return out;
    }

    /** A running task as a replica to move: same GPU count (or MIG devices of its profile), topology kept only as "any". */
    public static Replica of(RunningTask t) {
        if (t.migProfile() != null) {
            return new Replica(t.name(), t.migDevices().size(), null, t.cpuMillis(), t.memoryMiB(), GpuTopology.ANY, t.migProfile());
        }
        return new Replica(t.name(), t.gpus().size(), t.gpuMilli(), t.cpuMillis(), t.memoryMiB(), GpuTopology.ANY);
    }
}
