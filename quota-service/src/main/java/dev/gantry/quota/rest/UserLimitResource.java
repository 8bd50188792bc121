package dev.gantry.quota.rest;

import dev.gantry.kit.problem.InvalidRequestException;
import dev.gantry.kit.security.GantryRoles;
import dev.gantry.quota.domain.UserLimits;
import dev.gantry.quota.persistence.UserLimitEntity;
import io.quarkus.hibernate.reactive.panache.Panache;
import io.quarkus.security.ForbiddenException;
import io.quarkus.security.identity.SecurityIdentity;
import io.smallrye.mutiny.Uni;
import jakarta.annotation.security.RolesAllowed;
import jakarta.inject.Inject;
import jakarta.validation.Valid;
import jakarta.validation.constraints.NotNull;
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
import org.eclipse.microprofile.jwt.JsonWebToken;

/** Per-user limits across all queues: largest job in GPUs, most pending jobs. Admins set them; a user reads their own. */
@Path("/v1/user-limits")
@Produces(MediaType.APPLICATION_JSON)
public class UserLimitResource {

    @Inject
    SecurityIdentity identity;

    public record UserLimitsRequest(@PositiveOrZero Integer maxGpusPerJob, @PositiveOrZero Integer maxPendingJobs) {
    }

    @PUT
    @Path("/{user}")
    @Consumes(MediaType.APPLICATION_JSON)
    @RolesAllowed({GantryRoles.ADMIN})
    public Uni<UserLimits> put(@PathParam("user") String user, @Valid @NotNull UserLimitsRequest request) {
        UserLimits limits = new UserLimits(user, request.maxGpusPerJob(), request.maxPendingJobs());
        if (!limits.violations().isEmpty()) {
            throw InvalidRequestException.unprocessable(limits.violations());
        }
        return Panache.withTransaction(() -> UserLimitEntity.<UserLimitEntity>findById(user).chain(existing -> {
            UserLimitEntity row = existing != null ? existing : new UserLimitEntity();
            row.apply(limits);
            return row.<UserLimitEntity>persist();
        })).replaceWith(limits);
    }

    @GET
    @Path("/{user}")
    @RolesAllowed({GantryRoles.USER, GantryRoles.ADMIN, GantryRoles.SERVICE})
    public Uni<UserLimits> get(@PathParam("user") String user) {
        if (identity.hasRole(GantryRoles.USER) && !(identity.getPrincipal() instanceof JsonWebToken token && user.equals(token.getSubject()))) {
            throw new ForbiddenException("a user may read only their own limits");
        }
        return Panache.withSession(() -> UserLimitEntity.<UserLimitEntity>findById(user))
                .onItem().ifNull().failWith(() -> new NotFoundException("no limits for user " + user))
                .map(UserLimitEntity::toSpec);
    }

    @GET
    @RolesAllowed({GantryRoles.ADMIN, GantryRoles.SERVICE})
    public Uni<List<UserLimits>> list() {
        return Panache.withSession(() -> UserLimitEntity.<UserLimitEntity>listAll())
                .map(rows -> rows.stream().map(UserLimitEntity::toSpec).sorted(Comparator.comparing(UserLimits::user)).toList());
    }

    @DELETE
    @Path("/{user}")
    @RolesAllowed({GantryRoles.ADMIN})
    public Uni<Response> delete(@PathParam("user") String user) {
        return Panache.withTransaction(() -> UserLimitEntity.deleteById(user)).map(deleted -> {
            if (!deleted) {
                throw new NotFoundException("no limits for user " + user);
            }
            return Response.noContent().build();
        });
    }
}
