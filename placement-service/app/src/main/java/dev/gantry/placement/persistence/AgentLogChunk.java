package dev.gantry.placement.persistence;

import io.quarkus.hibernate.reactive.panache.PanacheEntityBase;
import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.IdClass;
import jakarta.persistence.Table;
import java.io.Serializable;
import java.util.Objects;
import java.util.UUID;

/** Bytes {@code [startOffset, endOffset)} of one task's log, as its node agent shipped them. */
@Entity
@Table(name = "agent_log_chunk")
@IdClass(AgentLogChunk.Key.class)
public class AgentLogChunk extends PanacheEntityBase {

    @Id
    @Column(name = "job_id")
    public UUID jobId;

    @Id
    public long attempt;

    @Id
    public String task;

    @Id
    @Column(name = "start_offset")
    public long startOffset;

    @Column(name = "end_offset", nullable = false)
    public long endOffset;

    @Column(nullable = false)
    public byte[] data;

    /** The primary key: job, attempt, task, first byte. */
    public static class Key implements Serializable {
        public UUID jobId;
        public long attempt;
        public String task;
        public long startOffset;

        public Key() {
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Key k && attempt == k.attempt && startOffset == k.startOffset && Objects.equals(jobId, k.jobId)
                    && Objects.equals(task, k.task);
        }

        @Override
        public int hashCode() {
            return Objects.hash(jobId, attempt, task, startOffset);
        }
    }
}
