package dev.gantry.placement.engine.packing;

import dev.gantry.placement.engine.domain.GpuTopology;
import dev.gantry.placement.engine.domain.Network;
import dev.gantry.placement.engine.domain.NetworkLevel;
import dev.gantry.placement.engine.domain.Node;
import dev.gantry.placement.engine.domain.PendingJob;
import dev.gantry.placement.engine.domain.RunningJob;
import dev.gantry.placement.engine.domain.RunningTask;
import dev.gantry.placement.engine.domain.Scenario;
import dev.gantry.placement.engine.domain.TaskGroup;
import dev.gantry.placement.engine.validation.PlanValidator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.Function;
import java.util.stream.Collectors;

/**
 * Where a running job may go when it moves, as a synthetic pending job for {@link GangPacker}: the
 * same GPU model, its node selector and tolerations (none: untainted nodes only), and the network
 * scope it has now (one node stays one node, one leaf stays one leaf). Its replicas are its
 * running tasks ({@link Replica#of(RunningTask)}), biggest first.
 */
public record MoveShape(PendingJob shape, List<Replica> replicas) {

    public static MoveShape of(Scenario sc, RunningJob job) {
        return of(job, nodesByName(sc));
    }

    /** The scenario's nodes by name, for {@link #of(RunningJob, Map)}. */
    public static Map<String, Node> nodesByName(Scenario sc) {
        return sc.nodes().stream().collect(Collectors.toMap(Node::name, Function.identity(), (a, b) -> a));
    }

    /** As {@link #of(Scenario, RunningJob)}, with the nodes by name built once for many jobs. */
    public static MoveShape of(RunningJob job, Map<String, Node> byName) {
        Set<String> nodeNames = new LinkedHashSet<>();
        job.tasks().forEach(t -> nodeNames.add(t.node()));
        List<Node> nodes = nodeNames.stream().map(byName::get).toList();
        NetworkLevel level = nodes.size() == 1 ? NetworkLevel.NODE
                : PlanValidator.networkOk(NetworkLevel.LEAF, nodes) ? NetworkLevel.LEAF : NetworkLevel.ANY;
        String model = nodes.getFirst().gpuModel();
        boolean sharing = job.tasks().stream().anyMatch(t -> t.gpuMilli() != null);
        String mig = job.tasks().stream().map(RunningTask::migProfile).filter(Objects::nonNull).findFirst().orElse(null);
        TaskGroup marker = new TaskGroup("migrate", 1, 1, 0, 0, sharing ? 1 : null, mig);
        PendingJob shape = new PendingJob(job.name(), job.queue(), job.priority(), 0, List.of(marker), job.tasks().size(),
                model == null ? List.of() : List.of(model), GpuTopology.ANY, new Network(level, null), false, job.nodeSelector(),
                job.tolerations(), job.preemptible(), job.checkpointable(), null);
        return new MoveShape(shape, job.tasks().stream().map(Replica::of).sorted(Replica.BIGGEST_FIRST).toList());
    }
}
