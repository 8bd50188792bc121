package dev.gantry.admission.persistence;

import dev.gantry.admission.domain.JobState;
import io.quarkus.hibernate.reactive.panache.PanacheEntityBase;
import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.EnumType;
import jakarta.persistence.Enumerated;
import jakarta.persistence.Id;
import jakarta.persistence.Table;
import jakarta.persistence.Version;
import java.time.Instant;
import java.util.UUID;

/** A submitted job as stored: the spec as JSON (it is read whole), the queryable fields as columns. */
@Entity
@Table(name = "job")
public class JobEntity extends PanacheEntityBase {

    @Id
    public UUID id;

    @Column(nullable = false)
    public String name;

    @Column(nullable = false)
    public String queue;

    @Column(nullable = false)
    public String owner;

    /** The team the job is charged to; its members may see and cancel it. */
    @Column(nullable = false)
    public String team;

    @Column(name = "priority_class")
    public String priorityClass;

    @Column(nullable = false)
    public int priority;

    @Column(name = "total_gpus", nullable = false)
    public int totalGpus;

    @Enumerated(EnumType.STRING)
    @Column(nullable = false)
    public JobState state;

    @Column(name = "pending_reason", columnDefinition = "text")
    public String pendingReason;

    /** The full spec (task groups, constraints) as submitted, in JSON. */
    @Column(nullable = false, columnDefinition = "text")
    public String spec;

    @Column(name = "submitted_at", nullable = false)
    public Instant submittedAt;

    @Column(name = "updated_at", nullable = false)
    public Instant updatedAt;

    /** The sequence of the last placement report applied (0: none); an older one is stale. */
    @Column(name = "placement_sequence", nullable = false)
    public long placementSequence;

    /** How many times placement bound the job (each {@code placements.bound} applied adds one). */
    @Column(nullable = false)
    public int attempts;

    /** The last placement ({@link dev.gantry.admission.domain.JobPlacement} as JSON); null: never placed. */
    @Column(columnDefinition = "text")
    public String placement;

    /** The exit code placement reported when the job ended; null: none reported (or bound again since). */
    @Column(name = "exit_code")
    public Integer exitCode;

    @Version
    public long version;
}
