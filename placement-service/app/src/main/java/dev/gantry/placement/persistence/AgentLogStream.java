package dev.gantry.placement.persistence;

import io.quarkus.hibernate.reactive.panache.PanacheEntityBase;
import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.IdClass;
import jakarta.persistence.Table;
import java.time.Instant;
import java.util.UUID;

/**
 * One task's log as its node agent ships it: which node ships it, where the next chunk starts, and
 * how many first bytes were let go to stay under the bound. Outlives the job (unlike {@link AgentTask}).
 */
@Entity
@Table(name = "agent_log_stream")
@IdClass(AgentTask.Key.class)
public class AgentLogStream extends PanacheEntityBase {

    @Id
    @Column(name = "job_id")
    public UUID jobId;

    @Id
    public long attempt;

    @Id
    public String task;

    @Column(nullable = false)
    public String node;

    @Column(name = "log_end", nullable = false)
    public long logEnd;

    @Column(name = "log_dropped", nullable = false)
    public long logDropped;

    @Column(name = "updated_at", nullable = false)
    public Instant updatedAt;
}
