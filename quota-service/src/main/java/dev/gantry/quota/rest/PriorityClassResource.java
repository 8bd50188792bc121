package dev.gantry.quota.rest;

import dev.gantry.kit.security.GantryRoles;
import dev.gantry.quota.domain.PriorityClassSpec;
import dev.gantry.quota.persistence.PriorityClassEntity;
import dev.gantry.quota.service.QuotaStore;
import io.quarkus.hibernate.reactive.panache.Panache;
import io.smallrye.mutiny.Uni;
import jakarta.annotation.security.RolesAllowed;
import jakarta.inject.Inject;
import jakarta.validation.Valid;
import jakarta.validation.constraints.NotNull;
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

/** Priority classes (Kubernetes PriorityClass): name, value, preemption policy, default flag. */
@Path("/v1/priority-classes")
@Produces(MediaType.APPLICATION_JSON)
public class PriorityClassResource {

    @Inject
    QuotaStore store;

    /**
     * Body of {@code PUT /v1/priority-classes/{name}}; preemptionPolicy defaults to PreemptLowerPriority.
     * {@code queues} (and their subtrees) and {@code teams} limit who may use the class; empty: anyone.
     */
    public record PriorityClassRequest(@NotNull Integer value, PriorityClassSpec.PreemptionPolicy preemptionPolicy, Boolean globalDefault,
            String description, List<@NotNull String> queues, List<@NotNull String> teams) {
    }

    @PUT
    @Path("/{name}")
    @Consumes(MediaType.APPLICATION_JSON)
    @RolesAllowed({GantryRoles.ADMIN})
    public Uni<PriorityClassSpec> put(@PathParam("name") String name, @Valid @NotNull PriorityClassRequest request) {
        PriorityClassSpec spec = new PriorityClassSpec(name, request.value(), request.preemptionPolicy(),
                Boolean.TRUE.equals(request.globalDefault()), request.description(), request.queues(), request.teams());
        return Panache.withTransaction(() -> store.saveAll(List.of(), List.of(spec), q -> "", c -> "")).replaceWith(spec);
    }

    @GET
    @Path("/{name}")
    @RolesAllowed({GantryRoles.USER, GantryRoles.ADMIN, GantryRoles.SERVICE})
    public Uni<PriorityClassSpec> get(@PathParam("name") String name) {
        return Panache.withSession(() -> PriorityClassEntity.<PriorityClassEntity>findById(name))
                .onItem().ifNull().failWith(() -> new NotFoundException("no priority class named " + name))
                .map(PriorityClassEntity::toSpec);
    }

    @GET
    @RolesAllowed({GantryRoles.USER, GantryRoles.ADMIN, GantryRoles.SERVICE})
    public Uni<List<PriorityClassSpec>> list() {
        return Panache.withSession(() -> PriorityClassEntity.<PriorityClassEntity>listAll())
                .map(rows -> rows.stream().map(PriorityClassEntity::toSpec)
                        .sorted(Comparator.comparing(PriorityClassSpec::value).reversed()).toList());
    }

    @DELETE
    @Path("/{name}")
    @RolesAllowed({GantryRoles.ADMIN})
    public Uni<Response> delete(@PathParam("name") String name) {
        return Panache.withTransaction(() -> PriorityClassEntity.deleteById(name))
                .map(deleted -> {
                    if (!deleted) {
                        throw new NotFoundException("no priority class named " + name);
                    }
                    return Response.noContent().build();
                });
    }
}
