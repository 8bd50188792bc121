package dev.gantry.placement.persistence;

import io.quarkus.hibernate.reactive.panache.PanacheEntityBase;
import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.GeneratedValue;
import jakarta.persistence.GenerationType;
import jakarta.persistence.Id;
import jakarta.persistence.SequenceGenerator;
import jakarta.persistence.Table;
import java.time.Instant;
import java.util.UUID;
import org.hibernate.annotations.JdbcTypeCode;
import org.hibernate.type.SqlTypes;

/**
 * GPUs held by one task of a placed job. Written before the binder acts, so a restarted service
 * knows what it already gave out and never books a GPU twice.
 */
@Entity
@Table(name = "allocation")
public class Allocation extends PanacheEntityBase {

    /** Taken from the column's sequence in blocks (V13), so a plan's rows are inserted in one batch. */
    @Id
    @GeneratedValue(strategy = GenerationType.SEQUENCE, generator = "allocation_ids")
    @SequenceGenerator(name = "allocation_ids", sequenceName = "allocation_id_seq", allocationSize = 50)
    public Long id;

    @Column(name = "job_id", nullable = false)
    public UUID jobId;

    @Column(nullable = false)
    public String task;

    @Column(nullable = false)
    public String node;

    /** GPU indices on the node. */
    @JdbcTypeCode(SqlTypes.ARRAY)
    @Column(name = "gpu_indices", nullable = false)
    public int[] gpuIndices;

    /** Thousandths of one GPU for a shared task; null when the GPUs are held whole. */
    @Column(name = "gpu_milli")
    public Integer gpuMilli;

    /** The profile of the MIG devices it holds; null when it holds none. */
    @Column(name = "mig_profile")
    public String migProfile;

    /** The MIG devices it holds (their ids, the MIG UUID where known; V111): a MIG task holds these and no GPU index. */
    @JdbcTypeCode(SqlTypes.ARRAY)
    @Column(name = "mig_devices", nullable = false)
    public String[] migDevices = new String[0];

    @Column(name = "allocated_at", nullable = false)
    public Instant allocatedAt;

    /** CPU the task holds, in millicores. */
    @Column(name = "cpu_millis", nullable = false)
    public long cpuMillis;

    /** Memory the task holds, in MiB. */
    @Column(name = "memory_mib", nullable = false)
    public long memoryMiB;
}
