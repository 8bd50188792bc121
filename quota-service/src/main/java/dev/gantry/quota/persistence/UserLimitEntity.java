package dev.gantry.quota.persistence;

import dev.gantry.quota.domain.UserLimits;
import io.quarkus.hibernate.reactive.panache.PanacheEntityBase;
import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;
import java.time.Instant;

@Entity
@Table(name = "user_limit")
public class UserLimitEntity extends PanacheEntityBase {

    @Id
    @Column(name = "user_name")
    public String user;

    @Column(name = "max_gpus_per_job")
    public Integer maxGpusPerJob;

    @Column(name = "max_pending_jobs")
    public Integer maxPendingJobs;

    @Column(name = "updated_at", nullable = false)
    public Instant updatedAt;

    public UserLimits toSpec() {
        return new UserLimits(user, maxGpusPerJob, maxPendingJobs);
    }

    public void apply(UserLimits limits) {
        user = limits.user();
        maxGpusPerJob = limits.maxGpusPerJob();
        maxPendingJobs = limits.maxPendingJobs();
        updatedAt = Instant.now();
    }
}
