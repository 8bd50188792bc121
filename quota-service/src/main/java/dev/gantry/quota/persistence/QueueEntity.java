package dev.gantry.quota.persistence;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.gantry.quota.domain.QueueSpec;
import dev.gantry.quota.domain.ResourceAmounts;
import dev.gantry.quota.domain.ResourceLimits;
import io.quarkus.hibernate.reactive.panache.PanacheEntityBase;
import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.EnumType;
import jakarta.persistence.Enumerated;
import jakarta.persistence.Id;
import jakarta.persistence.Table;
import java.time.Instant;
import java.util.List;
import java.util.Map;

@Entity
@Table(name = "queue")
public class QueueEntity extends PanacheEntityBase {

    private static final ObjectMapper JSON = new ObjectMapper();

    @Id
    public String name;

    public String parent;

    @Column(nullable = false)
    public int weight;

    @Column(name = "guarantee_gpus", nullable = false)
    public int guaranteeGpus;

    @Column(name = "guarantee_cpu_millis", nullable = false)
    public long guaranteeCpuMillis;

    @Column(name = "guarantee_memory_mib", nullable = false)
    public long guaranteeMemoryMiB;

    /** JSON object model -> GPUs */
    @Column(name = "guarantee_gpus_by_model", nullable = false)
    public String guaranteeGpusByModel;

    /** null: unbounded */
    @Column(name = "capability_gpus")
    public Integer capabilityGpus;

    @Column(name = "capability_cpu_millis")
    public Long capabilityCpuMillis;

    @Column(name = "capability_memory_mib")
    public Long capabilityMemoryMiB;

    @Column(name = "capability_gpus_by_model", nullable = false)
    public String capabilityGpusByModel;

    @Column(nullable = false)
    public boolean reclaimable;

    @Enumerated(EnumType.STRING)
    @Column(nullable = false)
    public QueueSpec.QueueState state;

    /** JSON array of user names */
    @Column(name = "member_users", nullable = false)
    public String memberUsers;

    @Column(name = "member_teams", nullable = false)
    public String memberTeams;

    @Column(name = "max_running_gpus")
    public Integer maxRunningGpus;

    @Column(name = "max_gpus_per_job")
    public Integer maxGpusPerJob;

    @Column(name = "max_pending_jobs_per_user")
    public Integer maxPendingJobsPerUser;

    @Column(name = "default_priority")
    public Integer defaultPriority;

    @Column(name = "max_priority")
    public Integer maxPriority;

    /** False: jobs asking to be migratable are refused; null: the nearest ancestor that says decides. */
    @Column(name = "migration_allowed")
    public Boolean migrationAllowed;

    @Column(name = "updated_at", nullable = false)
    public Instant updatedAt;

    public QueueSpec toSpec() {
        return new QueueSpec(name, parent, weight,
                new ResourceAmounts(guaranteeGpus, guaranteeCpuMillis, guaranteeMemoryMiB, readMap(guaranteeGpusByModel)),
                new ResourceLimits(capabilityGpus, capabilityCpuMillis, capabilityMemoryMiB, readMap(capabilityGpusByModel)),
                reclaimable, state, new QueueSpec.Members(readList(memberUsers), readList(memberTeams)),
                new QueueSpec.QueueLimits(maxRunningGpus, maxGpusPerJob, maxPendingJobsPerUser, defaultPriority, maxPriority,
                        migrationAllowed));
    }

    public void apply(QueueSpec spec) {
        name = spec.name();
        parent = spec.parent();
        weight = spec.weight();
        guaranteeGpus = spec.guarantee().gpus();
        guaranteeCpuMillis = spec.guarantee().cpuMillis();
        guaranteeMemoryMiB = spec.guarantee().memoryMiB();
        guaranteeGpusByModel = write(spec.guarantee().gpusByModel());
        capabilityGpus = spec.capability().gpus();
        capabilityCpuMillis = spec.capability().cpuMillis();
        capabilityMemoryMiB = spec.capability().memoryMiB();
        capabilityGpusByModel = write(spec.capability().gpusByModel());
        reclaimable = spec.reclaimable();
        state = spec.state();
        memberUsers = write(spec.members().users());
        memberTeams = write(spec.members().teams());
        maxRunningGpus = spec.limits().maxRunningGpus();
        maxGpusPerJob = spec.limits().maxGpusPerJob();
        maxPendingJobsPerUser = spec.limits().maxPendingJobsPerUser();
        defaultPriority = spec.limits().defaultPriority();
        maxPriority = spec.limits().maxPriority();
        migrationAllowed = spec.limits().migrationAllowed();
        updatedAt = Instant.now();
    }

    private static Map<String, Integer> readMap(String json) {
        try {
            return json == null ? Map.of() : JSON.readValue(json, new TypeReference<Map<String, Integer>>() { });
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("unreadable GPU model map in queue row", e);
        }
    }

    static List<String> readList(String json) {
        try {
            return json == null ? List.of() : JSON.readValue(json, new TypeReference<List<String>>() { });
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("unreadable member list in queue row", e);
        }
    }

    static String write(Object value) {
        try {
            return JSON.writeValueAsString(value);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }
}
