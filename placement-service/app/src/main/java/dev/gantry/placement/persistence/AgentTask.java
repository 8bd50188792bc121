package dev.gantry.placement.persistence;

import io.quarkus.hibernate.reactive.panache.PanacheEntityBase;
import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.IdClass;
import jakarta.persistence.Table;
import java.io.Serializable;
import java.time.Instant;
import java.util.Objects;
import java.util.UUID;

/**
 * What a node agent reported of one task of a placed job's attempt (the running job's
 * {@code bound_at} in milliseconds): it started, or it exited with a code and the last lines of its
 * log. The state only moves forward, so a report repeated or delivered late changes nothing.
 */
@Entity
@Table(name = "agent_task")
@IdClass(AgentTask.Key.class)
public class AgentTask extends PanacheEntityBase {

    public static final String RUNNING = "RUNNING";
    public static final String EXITED = "EXITED";

    @Id
    @Column(name = "job_id")
    public UUID jobId;

    @Id
    public long attempt;

    @Id
    public String task;

    @Column(nullable = false)
    public String node;

    @Column(nullable = false)
    public String state;

    @Column(name = "exit_code")
    public Integer exitCode;

    @Column(name = "log_tail", columnDefinition = "text")
    public String logTail;

    @Column(name = "started_at")
    public Instant startedAt;

    @Column(name = "ended_at")
    public Instant endedAt;

    @Column(name = "updated_at", nullable = false)
    public Instant updatedAt;

    /** The primary key: job, attempt, task. */
    public static class Key implements Serializable {
        public UUID jobId;
        public long attempt;
        public String task;

        public Key() {
        }

        public Key(UUID jobId, long attempt, String task) {
            this.jobId = jobId;
            this.attempt = attempt;
            this.task = task;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Key k && attempt == k.attempt && Objects.equals(jobId, k.jobId) && Objects.equals(task, k.task);
        }

        @Override
        public int hashCode() {
            return Objects.hash(jobId, attempt, task);
        }
    }
}
