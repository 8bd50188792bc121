package dev.gantry.placement.persistence;

import io.quarkus.hibernate.reactive.panache.PanacheEntityBase;
import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.GeneratedValue;
import jakarta.persistence.GenerationType;
import jakarta.persistence.Id;
import jakarta.persistence.Table;
import java.time.Instant;
import java.util.UUID;

/**
 * One move of a running job, in flight ({@code finishedAt} null) or done: the record the
 * disruption budget counts, and the answer to "what moved, from where to where, how did it end".
 */
@Entity
@Table(name = "job_migration")
public class JobMigration extends PanacheEntityBase {

    public static final String MOVED = "moved";
    public static final String ABANDONED = "abandoned";

    @Id
    @GeneratedValue(strategy = GenerationType.IDENTITY)
    public Long id;

    @Column(name = "job_id", nullable = false)
    public UUID jobId;

    @Column(nullable = false)
    public String queue;

    @Column(name = "from_nodes", nullable = false, columnDefinition = "text")
    public String fromNodes;

    @Column(name = "to_nodes", nullable = false, columnDefinition = "text")
    public String toNodes;

    @Column(name = "started_at", nullable = false)
    public Instant startedAt;

    @Column(name = "finished_at")
    public Instant finishedAt;

    /** {@link #MOVED} or {@link #ABANDONED}; null while in flight. */
    @Column(columnDefinition = "text")
    public String outcome;
}
