package dev.gantry.placement.agent;

import dev.gantry.contracts.events.Subjects;
import dev.gantry.contracts.nodes.NodeInfo;
import dev.gantry.kit.problem.InvalidRequestException;
import dev.gantry.placement.persistence.AgentTask;
import dev.gantry.placement.persistence.Allocation;
import dev.gantry.placement.persistence.NodeRecord;
import dev.gantry.placement.persistence.RunningJobRecord;
import dev.gantry.placement.window.Binder;
import dev.gantry.placement.window.Requeue;
import dev.gantry.placement.window.StandaloneExecutor;
import io.quarkus.hibernate.reactive.panache.Panache;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.persistence.LockModeType;
import java.time.Instant;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.function.Consumer;
import java.util.stream.Collectors;
import org.jboss.logging.Logger;

/**
 * Applies what node agents report of their tasks, each report in one transaction that locks the
 * job's running row (so two tasks' reports of one job are applied one after the other), idempotent
 * per (job, attempt, task, state): a state already reached changes nothing. A task exiting non-zero
 * fails the gang ({@code placements.failed}, released: its siblings' assignments vanish, so their
 * agents stop them); every task on an agent's node exiting 0 completes it ({@code placements.completed});
 * a task its agent lost (restarted without it) sends the job back in line ({@code placements.requeued}). Tasks told to
 * stop with grace that have all exited end the stop at once: a preempted job goes back in line, a moving one moves.
 * A report of an attempt that is no longer the job's (it ended, or was placed again) changes nothing.
 */
@ApplicationScoped
public class AgentReports {

    private static final Logger LOG = Logger.getLogger(AgentReports.class);
    /** How much of a failed task's log tail goes into the failure reason. */
    static final int REASON_TAIL_CHARS = 2000;

    public enum State { STARTED, EXITED, LOST }

    /**
     * A report as applied: whether it changed anything, and what it did; {@code moveStopped}: the last
     * task of a moving job has exited, so its move is finished after this transaction (not sent to the agent).
     */
    public record Outcome(boolean applied, String outcome, @com.fasterxml.jackson.annotation.JsonIgnore boolean moveStopped) {
        public Outcome(boolean applied, String outcome) {
            this(applied, outcome, false);
        }
    }

    private final StandaloneExecutor executor;
    private final Requeue requeue;
    private final Binder binder;

    public AgentReports(StandaloneExecutor executor, Requeue requeue, Binder binder) {
        this.executor = executor;
        this.requeue = requeue;
        this.binder = binder;
    }

    /**
     * Applies one report. {@code mayReportFor} is called with the node the task is allocated on before
     * anything is written, and throws (403) when the caller may not speak for that node.
     */
    public Uni<Outcome> apply(UUID jobId, long attempt, String task, State state, Integer exitCode, String logTail,
            Consumer<String> mayReportFor) {
        return Panache.withTransaction(() -> RunningJobRecord.<RunningJobRecord>findById(jobId, LockModeType.PESSIMISTIC_WRITE)
                .chain(job -> {
                    if (job == null || AgentAssignments.attemptOf(job) != attempt) {
                        return Uni.createFrom().item(new Outcome(false, "not the job's current attempt (it ended or was placed again)"));
                    }
                    return Allocation.<Allocation>list("jobId", jobId).chain(allocations -> {
                        Allocation mine = allocations.stream().filter(a -> a.task.equals(task)).findFirst().orElse(null);
                        if (mine == null) {
                            throw InvalidRequestException.unprocessable("task", "job " + jobId + " has no task " + task);
                        }
                        mayReportFor.accept(mine.node);
                        return AgentTask.<AgentTask>findById(new AgentTask.Key(jobId, attempt, task))
                                .chain(row -> switch (state) {
                                    case STARTED -> started(job, mine, row);
                                    case EXITED -> exited(job, mine, row, allocations, exitCode, logTail);
                                    case LOST -> lost(job, mine, row);
                                });
                    });
                }))
                // a moving job has stopped (checkpointed): it moves now, as a new attempt on its new GPUs, rather than at the
                // end of its grace; in its own transaction, as the sweep would (the sweep does it should this fail)
                .call(outcome -> !outcome.moveStopped() ? Uni.createFrom().voidItem() : binder.finishStop(jobId).onFailure().recoverWithItem(e -> {
                    LOG.warnf("job %s stopped for its move, which the sweep finishes at its grace's end: %s", jobId, e.toString());
                    return false;
                }).replaceWithVoid());
    }

    private Uni<Outcome> started(RunningJobRecord job, Allocation task, AgentTask row) {
        if (row != null) {
            return Uni.createFrom().item(new Outcome(false, "already " + row.state));
        }
        AgentTask created = newRow(job, task);
        created.state = AgentTask.RUNNING;
        created.startedAt = Instant.now();
        LOG.infof("job %s task %s started on %s", job.jobId, task.task, task.node);
        return created.persist().replaceWith(new Outcome(true, "running"));
    }

    private Uni<Outcome> exited(RunningJobRecord job, Allocation task, AgentTask row, List<Allocation> gang, Integer exitCode,
            String logTail) {
        if (row != null && AgentTask.EXITED.equals(row.state)) {
            return Uni.createFrom().item(new Outcome(false, "already exited with code " + row.exitCode));
        }
        AgentTask exited = row != null ? row : newRow(job, task);
        exited.state = AgentTask.EXITED;
        exited.exitCode = exitCode;
        exited.logTail = logTail;
        exited.endedAt = Instant.now();
        exited.updatedAt = exited.endedAt;
        Uni<?> stored = row != null ? Uni.createFrom().item(row) : exited.persist();
        LOG.infof("job %s task %s on %s exited with code %d", job.jobId, task.task, task.node, exitCode);
        if (job.evictingUntil != null) {
            // stopped with grace (preempted or moving): its exit is the end of its grace period's work, not a failure; once
            // every agent-run task has exited a preempted job goes back in line at once, its GPUs free before the deadline,
            // and a moving job is moved at once (after this transaction)
            boolean moving = job.migrationTargets != null;
            return stored.chain(() -> Panache.getSession()).chain(session -> session.flush())
                    .chain(() -> allAgentTasksExited(job, task, gang, false))
                    .chain(all -> !all ? Uni.createFrom().item(new Outcome(true, "exited while being stopped with grace"))
                            : moving ? Uni.createFrom().item(new Outcome(true, "exited while being stopped for a move; moved now", true))
                            : requeue.requeue(job, null, job.evictReason == null ? "preempted" : job.evictReason)
                                    .replaceWith(new Outcome(true, "exited while being stopped with grace; job requeued")));
        }
        if (exitCode != 0) {
            String reason = "task " + task.task + " on node " + task.node + " exited with code " + exitCode
                    + (logTail == null || logTail.isBlank() ? "" : "; last lines of its log:\n" + tail(logTail));
            return stored.chain(() -> executor.release(job.jobId, Subjects.PLACEMENTS_FAILED, reason, exitCode))
                    .replaceWith(new Outcome(true, "job failed"));
        }
        return stored.chain(() -> Panache.getSession()).chain(session -> session.flush())
                .chain(() -> allAgentTasksExited(job, task, gang, true))
                .chain(all -> !all ? Uni.createFrom().item(new Outcome(true, "exited; waiting for the other tasks"))
                        : executor.release(job.jobId, Subjects.PLACEMENTS_COMPLETED, "completed", 0)
                                .replaceWith(new Outcome(true, "job completed")));
    }

    /** Whether every task of the attempt on an agent's node (and {@code task}'s) has exited (with 0 when {@code zeroOnly}). */
    private static Uni<Boolean> allAgentTasksExited(RunningJobRecord job, Allocation task, List<Allocation> gang, boolean zeroOnly) {
        return NodeRecord.<NodeRecord>list("name in ?1", gang.stream().map(a -> a.node).collect(Collectors.toSet()))
                .chain(nodes -> AgentTask.<AgentTask>list("jobId = ?1 and attempt = ?2", job.jobId, AgentAssignments.attemptOf(job))
                        .map(reports -> {
                            Set<String> agentNodes = nodes.stream().filter(n -> NodeInfo.SOURCE_AGENT.equals(n.source))
                                    .map(n -> n.name).collect(Collectors.toSet());
                            Set<String> exited = reports.stream()
                                    .filter(r -> AgentTask.EXITED.equals(r.state) && (!zeroOnly || Integer.valueOf(0).equals(r.exitCode)))
                                    .map(r -> r.task).collect(Collectors.toSet());
                            return gang.stream().filter(a -> agentNodes.contains(a.node) || a.node.equals(task.node))
                                    .allMatch(a -> exited.contains(a.task));
                        }));
    }

    private Uni<Outcome> lost(RunningJobRecord job, Allocation task, AgentTask row) {
        if (row != null && AgentTask.EXITED.equals(row.state)) {
            return Uni.createFrom().item(new Outcome(false, "already exited with code " + row.exitCode));
        }
        String reason = "task " + task.task + " lost on node " + task.node + " (its agent no longer runs it)";
        return requeue.requeue(job.jobId, Subjects.PLACEMENTS_REQUEUED, reason).replaceWith(new Outcome(true, "job requeued"));
    }

    private static AgentTask newRow(RunningJobRecord job, Allocation task) {
        AgentTask row = new AgentTask();
        row.jobId = job.jobId;
        row.attempt = AgentAssignments.attemptOf(job);
        row.task = task.task;
        row.node = task.node;
        row.updatedAt = Instant.now();
        return row;
    }

    private static String tail(String log) {
        return log.length() <= REASON_TAIL_CHARS ? log.strip() : log.substring(log.length() - REASON_TAIL_CHARS).strip();
    }
}
