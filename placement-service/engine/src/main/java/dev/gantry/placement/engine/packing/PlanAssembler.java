package dev.gantry.placement.engine.packing;

import dev.gantry.placement.engine.domain.Placement;
import dev.gantry.placement.engine.domain.TaskPlacement;
import java.util.Comparator;
import java.util.List;

/** Turns packed gangs into plan records: tasks in name order, GPU indices ascending (MIG devices by id). */
public final class PlanAssembler {
    private PlanAssembler() {
    }

    public static List<TaskPlacement> tasks(ClusterState st, List<GangPacker.Assigned> assigned) {
        return assigned.stream()
                .map(a -> st.placement(a.node(), a.replica(), a.gpus()))
                .sorted(Comparator.comparing(TaskPlacement::task, PlanAssembler::naturalOrder))
                .toList();
    }

    public static Placement placement(ClusterState st, String job, List<GangPacker.Assigned> assigned) {
        return new Placement(job, tasks(st, assigned));
    }

    /** worker-2 before worker-10. */
    static int naturalOrder(String a, String b) {
        int da = a.lastIndexOf('-');
        int db = b.lastIndexOf('-');
        if (da > 0 && db > 0 && a.substring(0, da).equals(b.substring(0, db))) {
            try {
                return Integer.compare(Integer.parseInt(a.substring(da + 1)), Integer.parseInt(b.substring(db + 1)));
            } catch (NumberFormatException e) {
                return a.compareTo(b);
            }
        }
        return a.compareTo(b);
    }
}
