package dev.gantry.admission.rest;

import dev.gantry.admission.domain.Caller;
import dev.gantry.admission.persistence.NamespaceTeam;
import dev.gantry.admission.security.Callers;
import dev.gantry.contracts.validation.DnsName;
import dev.gantry.kit.problem.InvalidRequestException;
import io.quarkus.hibernate.reactive.panache.Panache;
import io.quarkus.security.Authenticated;
import io.quarkus.security.ForbiddenException;
import io.smallrye.mutiny.Uni;
import jakarta.validation.Valid;
import jakarta.validation.constraints.NotBlank;
import jakarta.validation.constraints.NotNull;
import jakarta.validation.constraints.Size;
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
import java.time.Instant;
import java.util.List;

/**
 * Which Kubernetes namespace's pod gangs are charged to which team (admins only). A gang of pods
 * in a namespace mapped to no team is refused; one in a mapped namespace goes through the same
 * membership and quota checks as an API job of that team.
 */
@Path("/v1/namespaces")
@Produces(MediaType.APPLICATION_JSON)
@Authenticated
public class NamespaceResource {

    /** The body of {@code PUT /v1/namespaces/{namespace}}. */
    public record Mapping(@NotBlank @Size(max = 253) String team) {
    }

    /** A namespace and its team, as read back. */
    public record MappingView(String namespace, String team, String updatedBy, Instant updatedAt) {

        static MappingView of(NamespaceTeam row) {
            return new MappingView(row.namespace, row.team, row.updatedBy, row.updatedAt);
        }
    }

    private final Callers callers;

    public NamespaceResource(Callers callers) {
        this.callers = callers;
    }

    @GET
    public Uni<List<MappingView>> list() {
        admin();
        return Panache.withSession(() -> NamespaceTeam.<NamespaceTeam>listAll())
                .map(rows -> rows.stream().map(MappingView::of).sorted(java.util.Comparator.comparing(MappingView::namespace)).toList());
    }

    @GET
    @Path("/{namespace}")
    public Uni<MappingView> get(@PathParam("namespace") String namespace) {
        admin();
        return Panache.withSession(() -> NamespaceTeam.<NamespaceTeam>findById(namespace)).map(row -> {
            if (row == null) {
                throw new NotFoundException("namespace " + namespace + " is mapped to no team");
            }
            return MappingView.of(row);
        });
    }

    /** Maps (or re-maps) a namespace to a team; 201 when new, 200 when changed. */
    @PUT
    @Path("/{namespace}")
    @Consumes(MediaType.APPLICATION_JSON)
    public Uni<Response> put(@PathParam("namespace") String namespace, @Valid @NotNull Mapping mapping) {
        Caller caller = admin();
        if (!DnsName.isValid(namespace) || namespace.length() > 63 || namespace.contains(".")) {
            throw InvalidRequestException.badRequest("namespace", "must be a Kubernetes namespace name ([a-z0-9]([-a-z0-9]*[a-z0-9])?, at most 63 characters)");
        }
        return Panache.withTransaction(() -> NamespaceTeam.<NamespaceTeam>findById(namespace).chain(existing -> {
            NamespaceTeam row = existing != null ? existing : new NamespaceTeam();
            row.namespace = namespace;
            row.team = mapping.team().trim();
            row.updatedBy = caller.user();
            row.updatedAt = Instant.now();
            return row.<NamespaceTeam>persist().map(saved -> Response.status(existing == null ? 201 : 200)
                    .entity(MappingView.of(saved)).build());
        }));
    }

    /** Unmaps a namespace: gangs formed there from now on are refused (admitted ones keep running). */
    @DELETE
    @Path("/{namespace}")
    public Uni<Response> delete(@PathParam("namespace") String namespace) {
        admin();
        return Panache.withTransaction(() -> NamespaceTeam.deleteById(namespace)).map(deleted -> {
            if (!deleted) {
                throw new NotFoundException("namespace " + namespace + " is mapped to no team");
            }
            return Response.noContent().build();
        });
    }

    private Caller admin() {
        Caller caller = callers.current();
        if (!caller.admin()) {
            throw new ForbiddenException("only an admin maps namespaces to teams");
        }
        return caller;
    }
}
