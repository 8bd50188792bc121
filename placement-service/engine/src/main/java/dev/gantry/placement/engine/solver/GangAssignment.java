package dev.gantry.placement.engine.solver;

import ai.timefold.solver.core.api.domain.common.PlanningId;
import ai.timefold.solver.core.api.domain.entity.PlanningEntity;
import ai.timefold.solver.core.api.domain.valuerange.ValueRangeProvider;
import ai.timefold.solver.core.api.domain.variable.PlanningVariable;
import java.util.List;

/**
 * The planning entity: one per pending gang and one per running job that may move or be
 * preempted. Its variable is the chosen {@link PlacementOption}; null means "stays pending" for
 * a pending gang and "preempted" for a running job. Running jobs that may do neither are not
 * entities at all: their GPUs are removed from every option's reach (pinned facts).
 */
@PlanningEntity
public class GangAssignment {
    public enum Role { PENDING, RUNNING }

    private String job;
    private Role role;
    private String queue;
    private QueueFacts queueFacts;
    private List<QueueFacts> queueChain;
    private int priority;
    /** GPUs the whole gang asks for (pending) or holds (running), in milli-GPUs. */
    private long gpuMilli;
    /** Medium-level value of one GPU of this job: 1000 + priority (+ aging for pending). */
    private long gpuWeight;
    private boolean preemptible;
    private boolean checkpointable;
    private long runningSeconds;
    /** What moving this job costs in the soft score (the profile's {@link MoveCost} of its GPUs); 0 for a pending gang. */
    private long moveCost;
    private List<PlacementOption> options;
    private PlacementOption current;

    private PlacementOption option;

    public GangAssignment() {
        // for Timefold's cloner
    }

    public GangAssignment(String job, Role role, QueueFacts queueFacts, List<QueueFacts> queueChain, int priority, long gpuMilli, long gpuWeight,
            boolean preemptible, boolean checkpointable, long runningSeconds, List<PlacementOption> options, PlacementOption current) {
        this(job, role, queueFacts, queueChain, priority, gpuMilli, gpuWeight, preemptible, checkpointable, runningSeconds, options, current,
                MoveCost.DEFAULT);
    }

    public GangAssignment(String job, Role role, QueueFacts queueFacts, List<QueueFacts> queueChain, int priority, long gpuMilli, long gpuWeight,
            boolean preemptible, boolean checkpointable, long runningSeconds, List<PlacementOption> options, PlacementOption current,
            MoveCost moveCost) {
        this.job = job;
        this.role = role;
        this.queue = queueFacts.name();
        this.queueFacts = queueFacts;
        this.queueChain = List.copyOf(queueChain);
        this.priority = priority;
        this.gpuMilli = gpuMilli;
        this.gpuWeight = gpuWeight;
        this.preemptible = preemptible;
        this.checkpointable = checkpointable;
        this.runningSeconds = runningSeconds;
        this.moveCost = role == Role.RUNNING ? moveCost.of(gpuMilli) : 0;
        this.options = List.copyOf(options);
        this.current = current;
    }

    /**
     * A copy for a planning clone: the same facts, its own variable ({@link PlacementSolutionCloner}).
     */
    GangAssignment planningClone() {
        GangAssignment c = new GangAssignment();
        c.job = job;
        c.role = role;
        c.queue = queue;
        c.queueFacts = queueFacts;
        c.queueChain = queueChain;
        c.priority = priority;
        c.gpuMilli = gpuMilli;
        c.gpuWeight = gpuWeight;
        c.preemptible = preemptible;
        c.checkpointable = checkpointable;
        c.runningSeconds = runningSeconds;
        c.moveCost = moveCost;
        c.options = options;
        c.current = current;
        c.option = option;
        return c;
    }

    @PlanningId
    public String getJob() {
        return job;
    }

    @PlanningVariable(valueRangeProviderRefs = "options", allowsUnassigned = true)
    public PlacementOption getOption() {
        return option;
    }

    public void setOption(PlacementOption option) {
        this.option = option;
    }

    @ValueRangeProvider(id = "options")
    public List<PlacementOption> getOptions() {
        return options;
    }

    public Role role() {
        return role;
    }

    public boolean pending() {
        return role == Role.PENDING;
    }

    public boolean running() {
        return role == Role.RUNNING;
    }

    public String queue() {
        return queue;
    }

    public QueueFacts queueFacts() {
        return queueFacts;
    }

    public List<QueueFacts> queueChain() {
        return queueChain;
    }

    public int priority() {
        return priority;
    }

    public long gpuMilli() {
        return gpuMilli;
    }

    public long gpuWeight() {
        return gpuWeight;
    }

    public boolean preemptible() {
        return preemptible;
    }

    public boolean checkpointable() {
        return checkpointable;
    }

    public long runningSeconds() {
        return runningSeconds;
    }

    /** What moving this job costs in the soft score. */
    public long moveCost() {
        return moveCost;
    }

    public PlacementOption current() {
        return current;
    }

    /** GPUs this entity holds under its current option (0 when unplaced or preempted). */
    public long placedMilli() {
        return option == null ? 0 : option.gpuMilli();
    }

    /** A running job evicted by the plan. */
    public boolean preempted() {
        return running() && option == null;
    }

    public boolean migrated() {
        return running() && option != null && option != current;
    }

    /** Pending GPUs left unplaced (a partial gang places fewer than all its pods). */
    public long missingMilli() {
        return pending() ? gpuMilli - placedMilli() : 0;
    }

    @Override
    public String toString() {
        return job + "=" + option;
    }
}
