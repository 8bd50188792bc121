package dev.gantry.placement.window;

import dev.gantry.contracts.events.EventCodec;
import dev.gantry.contracts.jobs.JobQueued;
import dev.gantry.placement.cluster.ClusterActuator;
import dev.gantry.placement.persistence.ClusterGang;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Instant;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.eclipse.microprofile.config.inject.ConfigProperty;

/** Where jobs' pods are on the cluster ({@code cluster_gang} rows); nothing in standalone mode. Inside a session. */
@ApplicationScoped
public class Gangs {

    private final ClusterActuator cluster;
    private final String namespace;

    public Gangs(ClusterActuator cluster,
            @ConfigProperty(name = "gantry.placement.kubernetes.namespace", defaultValue = "gantry") String namespace) {
        this.cluster = cluster;
        this.namespace = namespace;
    }

    /** The gang to launch: users' pods as recorded when the gang formed, or a new record for the pods gantry creates. */
    Uni<ClusterActuator.Gang> gangOf(UUID jobId, JobQueued spec, List<ClusterActuator.TaskBinding> tasks) {
        return ClusterGang.<ClusterGang>findById(jobId).chain(row -> {
            if (row != null && row.userPods) {
                row.launchedAt = null; // this placement is not on the cluster yet
                @SuppressWarnings("unchecked")
                Map<String, String> pods = EventCodec.fromJson(row.pods, LinkedHashMap.class);
                return Uni.createFrom().item(new ClusterActuator.Gang(
                        new ClusterActuator.GangRef(jobId, row.namespace, row.gangLabel, true), spec, tasks, pods, row.attempt));
            }
            ClusterGang gang = row != null ? row : new ClusterGang();
            gang.jobId = jobId;
            gang.namespace = namespace;
            gang.gangLabel = jobId.toString();
            gang.userPods = false;
            gang.attempt = row == null ? 1 : row.attempt + 1;
            gang.createdAt = Instant.now();
            gang.launchedAt = null;
            return gang.persist().map(x -> new ClusterActuator.Gang(
                    new ClusterActuator.GangRef(jobId, namespace, gang.gangLabel, false), spec, tasks, Map.of(), gang.attempt));
        });
    }

    /** Where the jobs' pods are, by job; empty in standalone mode. */
    Uni<Map<UUID, ClusterActuator.GangRef>> gangRefs(List<UUID> jobIds) {
        if (!cluster.acts()) {
            return Uni.createFrom().item(Map.of());
        }
        return ClusterGang.<ClusterGang>list("jobId in ?1", jobIds).map(rows -> {
            Map<UUID, ClusterActuator.GangRef> refs = new HashMap<>();
            rows.forEach(row -> refs.put(row.jobId, new ClusterActuator.GangRef(row.jobId, row.namespace, row.gangLabel, row.userPods)));
            return refs;
        });
    }

    /** Where the job's pods are; null in standalone mode or when it never reached the cluster. */
    Uni<ClusterActuator.GangRef> gangRef(UUID jobId) {
        if (!cluster.acts()) {
            return Uni.createFrom().nullItem();
        }
        return ClusterGang.<ClusterGang>findById(jobId).map(row -> row == null ? null
                : new ClusterActuator.GangRef(jobId, row.namespace, row.gangLabel, row.userPods));
    }
}
