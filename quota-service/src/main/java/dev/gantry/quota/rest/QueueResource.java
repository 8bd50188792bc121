package dev.gantry.quota.rest;

import dev.gantry.kit.problem.InvalidRequestException;
import dev.gantry.kit.security.GantryRoles;
import dev.gantry.quota.domain.PriorityClassSpec;
import dev.gantry.quota.domain.QueueSpec;
import dev.gantry.quota.domain.ResourceAmounts;
import dev.gantry.quota.domain.ResourceLimits;
import dev.gantry.quota.persistence.QueueEntity;
import dev.gantry.quota.persistence.QueueUsageEntity;
import dev.gantry.quota.service.QuotaStore;
import io.quarkus.hibernate.reactive.panache.Panache;
import io.smallrye.mutiny.Uni;
import jakarta.annotation.security.RolesAllowed;
import jakarta.inject.Inject;
import jakarta.validation.Valid;
import jakarta.validation.constraints.Max;
import jakarta.validation.constraints.Min;
import jakarta.validation.constraints.NotNull;
import jakarta.validation.constraints.Positive;
import jakarta.validation.constraints.PositiveOrZero;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.DELETE;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.NotFoundException;
import jakarta.ws.rs.PUT;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import java.util.Comparator;
import java.util.List;
import java.util.Map;

/** Queues: create or replace by name, read one, list all, delete a leaf. */
@Path("/v1/queues")
@Produces(MediaType.APPLICATION_JSON)
public class QueueResource {

    @Inject
    QuotaStore store;

    /** Amounts per resource; omitted fields are 0 in a guarantee and unbounded in a capability. */
    public record ResourcesRequest(@PositiveOrZero Integer gpus, @PositiveOrZero Long cpuMillis, @PositiveOrZero Long memoryMiB,
            Map<String, @NotNull @PositiveOrZero Integer> gpusByModel) {

        ResourceAmounts toAmounts() {
            return new ResourceAmounts(gpus == null ? 0 : gpus, cpuMillis == null ? 0 : cpuMillis, memoryMiB == null ? 0 : memoryMiB,
                    gpusByModel);
        }

        ResourceLimits toLimits() {
            return new ResourceLimits(gpus, cpuMillis, memoryMiB, gpusByModel);
        }
    }

    public record MembersRequest(List<@NotNull String> users, List<@NotNull String> teams) {
    }

    public record LimitsRequest(@PositiveOrZero Integer maxRunningGpus, @PositiveOrZero Integer maxGpusPerJob,
            @PositiveOrZero Integer maxPendingJobsPerUser,
            @Min(-PriorityClassSpec.MAX_USER_VALUE) @Max(PriorityClassSpec.MAX_USER_VALUE) Integer defaultPriority,
            @Min(-PriorityClassSpec.MAX_USER_VALUE) @Max(PriorityClassSpec.MAX_USER_VALUE) Integer maxPriority,
            Boolean migrationAllowed) {
    }

    /**
     * Body of {@code PUT /v1/queues/{name}}; the name comes from the path. Omitted fields take the
     * scenario format's defaults: weight 1, no guarantee, unbounded capability, reclaimable, open,
     * no member list of its own, no limits.
     */
    public record QueueRequest(String parent, @Positive Integer weight, @Valid ResourcesRequest guarantee,
            @Valid ResourcesRequest capability, Boolean reclaimable, QueueSpec.QueueState state, @Valid MembersRequest members,
            @Valid LimitsRequest limits) {

        QueueSpec toSpec(String name) {
            return new QueueSpec(name, parent, weight == null ? 1 : weight,
                    guarantee == null ? ResourceAmounts.ZERO : guarantee.toAmounts(),
                    capability == null ? ResourceLimits.UNBOUNDED : capability.toLimits(),
                    reclaimable == null || reclaimable, state == null ? QueueSpec.QueueState.OPEN : state,
                    members == null ? QueueSpec.Members.ANYONE : new QueueSpec.Members(members.users(), members.teams()),
                    limits == null ? QueueSpec.QueueLimits.NONE
                            : new QueueSpec.QueueLimits(limits.maxRunningGpus(), limits.maxGpusPerJob(), limits.maxPendingJobsPerUser(),
                                    limits.defaultPriority(), limits.maxPriority(), limits.migrationAllowed()));
        }
    }

    @PUT
    @Path("/{name}")
    @Consumes(MediaType.APPLICATION_JSON)
    @RolesAllowed({GantryRoles.ADMIN})
    public Uni<QueueSpec> put(@PathParam("name") String name, @Valid @NotNull QueueRequest request) {
        QueueSpec spec = request.toSpec(name);
        return Panache.withTransaction(() -> store.saveAll(List.of(spec), List.of(), q -> "", c -> ""))
                .replaceWith(spec);
    }

    @GET
    @Path("/{name}")
    @RolesAllowed({GantryRoles.USER, GantryRoles.ADMIN, GantryRoles.SERVICE})
    public Uni<QueueSpec> get(@PathParam("name") String name) {
        return Panache.withSession(() -> QueueEntity.<QueueEntity>findById(name))
                .onItem().ifNull().failWith(() -> new NotFoundException("no queue named " + name))
                .map(QueueEntity::toSpec);
    }

    @GET
    @RolesAllowed({GantryRoles.USER, GantryRoles.ADMIN, GantryRoles.SERVICE})
    public Uni<List<QueueSpec>> list() {
        return Panache.withSession(() -> QueueEntity.<QueueEntity>listAll())
                .map(queues -> queues.stream().map(QueueEntity::toSpec).sorted(Comparator.comparing(QueueSpec::name)).toList());
    }

    /** Deletes a queue that has no child queues (its jobs' events keep counting under its name until they end). */
    @DELETE
    @Path("/{name}")
    @RolesAllowed({GantryRoles.ADMIN})
    public Uni<Response> delete(@PathParam("name") String name) {
        return Panache.withTransaction(() -> store.lockTree()
                .chain(() -> QueueEntity.<QueueEntity>findById(name))
                .onItem().ifNull().failWith(() -> new NotFoundException("no queue named " + name))
                .chain(queue -> QueueEntity.<QueueEntity>list("parent", name).chain(children -> {
                    if (!children.isEmpty()) {
                        throw InvalidRequestException.unprocessable("name", "queue '" + name + "' has child queues ("
                                + String.join(", ", children.stream().map(c -> c.name).sorted().toList())
                                + "); delete or move them first");
                    }
                    return queue.delete().chain(() -> QueueUsageEntity.delete("queue", name));
                })))
                .replaceWith(Response.noContent().build());
    }
}
