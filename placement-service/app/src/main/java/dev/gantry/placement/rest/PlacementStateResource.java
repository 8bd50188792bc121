package dev.gantry.placement.rest;

import dev.gantry.kit.security.GantryRoles;
import dev.gantry.placement.persistence.Allocation;
import dev.gantry.placement.persistence.PendingJob;
import dev.gantry.placement.window.NodeQuarantine;
import dev.gantry.placement.window.StartForecastStore;
import io.quarkus.hibernate.reactive.panache.Panache;
import io.smallrye.mutiny.Uni;
import jakarta.annotation.security.RolesAllowed;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.MediaType;
import java.time.Instant;
import java.util.List;
import java.util.UUID;

/** Read-only views of what placement holds: jobs waiting, GPUs allocated, nodes set aside. */
@Path("/v1")
@Produces(MediaType.APPLICATION_JSON)
public class PlacementStateResource {

    private final NodeQuarantine quarantine;
    private final StartForecastStore store;

    public PlacementStateResource(NodeQuarantine quarantine, StartForecastStore store) {
        this.quarantine = quarantine;
        this.store = store;
    }

    /**
     * The leading replica's last start-time forecasts, as stored in the placement database, so every
     * replica answers. {@code computedAt} null: no window has forecast yet; a waiting job without an
     * item is further back in line than {@code maxJobs}; {@code stale} (with {@code staleReason}): the
     * forecast is older than three forecast periods and its jobs' start times are unknown.
     * {@code job} (repeatable) keeps only those jobs.
     */
    @GET
    @Path("/start-forecasts")
    @RolesAllowed({GantryRoles.ADMIN, GantryRoles.SERVICE})
    public Uni<StartForecastStore.Page> startForecasts(@QueryParam("job") List<UUID> jobs) {
        return store.read(jobs, Instant.now());
    }

    /** Nodes the last window left out because their state is inconsistent, with why and since when. */
    @GET
    @Path("/quarantined-nodes")
    @RolesAllowed({GantryRoles.USER, GantryRoles.ADMIN, GantryRoles.SERVICE})
    public List<NodeQuarantine.Entry> quarantined() {
        return quarantine.current();
    }

    public record PendingJobView(UUID jobId, String name, String queue, int priority, int totalGpus, Instant submittedAt) {
    }

    /** One task's allocation; {@code migDevices} (ids) only for a task on MIG devices, else left out. */
    public record AllocationView(UUID jobId, String task, String node, int[] gpus, Integer gpuMilli, Instant allocatedAt,
            @com.fasterxml.jackson.annotation.JsonInclude(com.fasterxml.jackson.annotation.JsonInclude.Include.NON_EMPTY)
            List<String> migDevices) {
    }

    @GET
    @Path("/pending-jobs")
    @RolesAllowed({GantryRoles.ADMIN, GantryRoles.SERVICE})
    public Uni<List<PendingJobView>> pending() {
        return Panache.withSession(() -> PendingJob.<PendingJob>find("order by priority desc, submittedAt").list())
                .map(jobs -> jobs.stream()
                        .map(j -> new PendingJobView(j.jobId, j.name, j.queue, j.priority, j.totalGpus, j.submittedAt))
                        .toList());
    }

    @GET
    @Path("/allocations")
    @RolesAllowed({GantryRoles.USER, GantryRoles.ADMIN, GantryRoles.SERVICE})
    public Uni<List<AllocationView>> allocations() {
        return Panache.withSession(() -> Allocation.<Allocation>find("order by node, id").list())
                .map(rows -> rows.stream()
                        .map(a -> new AllocationView(a.jobId, a.task, a.node, a.gpuIndices, a.gpuMilli, a.allocatedAt,
                                a.migDevices == null ? List.of() : List.of(a.migDevices)))
                        .toList());
    }
}
