package dev.gantry.placement.persistence;

import io.quarkus.hibernate.reactive.panache.PanacheEntityBase;
import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;
import java.time.Instant;
import java.util.UUID;

/**
 * Kubernetes binder mode: where a job's pods live. For a job submitted through the API gantry
 * creates the pods ({@code userPods} false, {@code gangLabel} the job id); for a gang of pods a
 * user created, {@code pods} maps each engine task to the existing pod it stands for; such a gang's
 * job id is chosen at random when it forms (never taken from a label) and found again by namespace
 * and label, and admission admits it ({@code jobs.queued}) or refuses it ({@code refusedReason}).
 */
@Entity
@Table(name = "cluster_gang")
public class ClusterGang extends PanacheEntityBase {

    @Id
    @Column(name = "job_id")
    public UUID jobId;

    @Column(nullable = false)
    public String namespace;

    /** The pods' {@code gantry.dev/job} label value. */
    @Column(name = "gang_label", nullable = false)
    public String gangLabel;

    @Column(name = "user_pods", nullable = false)
    public boolean userPods;

    /** JSON object task name -> pod name (user pods only; empty for API jobs). */
    @Column(nullable = false, columnDefinition = "text")
    public String pods = "{}";

    /** How often the job was placed on the cluster; part of the names of the pods gantry creates. */
    @Column(nullable = false)
    public int attempt = 1;

    @Column(name = "created_at", nullable = false)
    public Instant createdAt;

    /**
     * When every pod of this attempt was created (or found) and bound; null while the placement is
     * recorded but not yet on the cluster (a restart in between leaves it null: it is launched again).
     */
    @Column(name = "launched_at")
    public Instant launchedAt;

    /** Why admission refused this user gang ({@code jobs.refused}); null while admitted or asked. */
    @Column(name = "refused_reason", columnDefinition = "text")
    public String refusedReason;

    @Column(name = "refused_at")
    public Instant refusedAt;
}
