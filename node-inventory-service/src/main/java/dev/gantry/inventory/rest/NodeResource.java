package dev.gantry.inventory.rest;

import com.fasterxml.jackson.annotation.JsonUnwrapped;
import dev.gantry.contracts.nodes.NodeInfo;
import dev.gantry.contracts.validation.FieldViolation;
import dev.gantry.inventory.NodeRegistry;
import dev.gantry.inventory.domain.NodeSource;
import dev.gantry.inventory.placement.PlacementQuarantine;
import dev.gantry.kit.problem.InvalidRequestException;
import dev.gantry.kit.security.GantryRoles;
import dev.gantry.kit.security.NodeScope;
import io.quarkus.resteasy.reactive.jackson.CustomDeserialization;
import io.quarkus.security.identity.SecurityIdentity;
import io.smallrye.mutiny.Uni;
import jakarta.annotation.security.RolesAllowed;
import org.eclipse.microprofile.openapi.annotations.Operation;
import jakarta.validation.Valid;
import jakarta.validation.constraints.NotNull;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.DELETE;
import jakarta.ws.rs.DefaultValue;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.HeaderParam;
import jakarta.ws.rs.NotFoundException;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.PUT;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;

/**
 * The agent API (a node registers, updates and heartbeats by name), the operator's cordon and
 * removal, and the read API. An agent token may write and read only the node it names; the agent
 * API refuses a node that came from Kubernetes (409). Who may call what: docs/security.md.
 */
@Path("/v1/nodes")
@Produces(MediaType.APPLICATION_JSON)
public class NodeResource {

    static final int MAX_LIMIT = 500;

    /**
     * One page of {@code GET /v1/nodes}; pass {@code nextCursor} as {@code cursor} for the next (null: last page).
     * {@code quarantineKnown} false: placement-service did not answer, so no node shows a quarantine.
     */
    public record NodePage(List<NodeView> items, String nextCursor, boolean quarantineKnown) {
    }

    /** A node as read: the inventory's fields, and {@code quarantine} (null: none) when placement left it out of scheduling. */
    public record NodeView(@JsonUnwrapped NodeInfo node, PlacementQuarantine.Quarantine quarantine) {
    }

    private final NodeRegistry registry;
    private final SecurityIdentity identity;
    private final PlacementQuarantine quarantine;

    public NodeResource(NodeRegistry registry, SecurityIdentity identity, PlacementQuarantine quarantine) {
        this.registry = registry;
        this.identity = identity;
        this.quarantine = quarantine;
    }

    @PUT
    @Path("/{name}")
    @Consumes(MediaType.APPLICATION_JSON)
    @CustomDeserialization(StrictJson.class)
    @RolesAllowed({GantryRoles.ADMIN, GantryRoles.AGENT})
    public Uni<NodeInfo> put(@PathParam("name") String name, @Valid @NotNull NodeSpec request) {
        NodeScope.requireOwnNode(identity, name);
        List<FieldViolation> errors = new ArrayList<>();
        NodeInfo described = request.describe(name, "", NodeInfo.Health.READY, Instant.now(), errors);
        if (!errors.isEmpty()) {
            throw InvalidRequestException.unprocessable(errors);
        }
        return registry.upsert(described, NodeSource.AGENT);
    }

    @POST
    @Path("/{name}/heartbeat")
    @RolesAllowed({GantryRoles.ADMIN, GantryRoles.AGENT})
    public Uni<NodeInfo> heartbeat(@PathParam("name") String name) {
        NodeScope.requireOwnNode(identity, name);
        return registry.heartbeat(name, Instant.now()).onItem().ifNull().failWith(() -> notFound(name));
    }

    /**
     * {@code POST /v1/nodes/{name}:cordon} and {@code :uncordon}. Quarkus REST does not match a template
     * with a literal after a parameter in the same segment ({@code /{name}:cordon}) before the plain
     * {@code /{name}}, so the segment is taken whole and split at its colon (names never hold one).
     */
    @POST
    @Path("/{nameAndAction}")
    @Operation(summary = "Cordon or uncordon a node: POST /v1/nodes/{name}:cordon, POST /v1/nodes/{name}:uncordon")
    @RolesAllowed({GantryRoles.ADMIN})
    public Uni<NodeInfo> action(@PathParam("nameAndAction") String nameAndAction) {
        int colon = nameAndAction.lastIndexOf(':');
        String name = colon < 0 ? nameAndAction : nameAndAction.substring(0, colon);
        String action = colon < 0 ? "" : nameAndAction.substring(colon + 1);
        boolean cordoned = switch (action) {
            case "cordon" -> true;
            case "uncordon" -> false;
            default -> throw new NotFoundException("no action '" + action + "' on nodes: POST /v1/nodes/{name}:cordon or :uncordon");
        };
        return registry.cordon(name, cordoned).onItem().ifNull().failWith(() -> notFound(name));
    }

    @DELETE
    @Path("/{name}")
    @RolesAllowed({GantryRoles.ADMIN})
    public Uni<Response> delete(@PathParam("name") String name) {
        return registry.remove(name, null).map(removed -> {
            if (!removed) {
                throw notFound(name);
            }
            return Response.noContent().build();
        });
    }

    @GET
    @Path("/{name}")
    @RolesAllowed({GantryRoles.USER, GantryRoles.ADMIN, GantryRoles.SERVICE, GantryRoles.AGENT})
    public Uni<NodeView> get(@PathParam("name") String name, @HeaderParam("Authorization") String authorization) {
        NodeScope.requireOwnNode(identity, name);
        return registry.find(name).onItem().ifNull().failWith(() -> notFound(name))
                .chain(node -> quarantine.current(authorization)
                        .map(q -> new NodeView(node, q.map(m -> m.get(name)).orElse(null))));
    }

    /** Nodes in name order, filtered by GPU model, leaf and effective schedulability; paged by {@code limit} and {@code cursor}. */
    @GET
    @RolesAllowed({GantryRoles.USER, GantryRoles.ADMIN, GantryRoles.SERVICE})
    public Uni<NodePage> list(@QueryParam("model") String model, @QueryParam("leaf") String leaf,
            @QueryParam("schedulable") String schedulable, @QueryParam("limit") @DefaultValue("100") int limit,
            @QueryParam("cursor") String cursor, @HeaderParam("Authorization") String authorization) {
        if (limit < 1 || limit > MAX_LIMIT) {
            throw InvalidRequestException.badRequest("limit", "must be 1.." + MAX_LIMIT);
        }
        Boolean wantSchedulable = null;
        if (schedulable != null) {
            if (!schedulable.equals("true") && !schedulable.equals("false")) {
                throw InvalidRequestException.badRequest("schedulable", "must be true or false");
            }
            wantSchedulable = Boolean.valueOf(schedulable);
        }
        String after = cursor == null ? null : decodeCursor(cursor);
        return registry.list(new NodeRegistry.NodeQuery(model, leaf, wantSchedulable, after, limit))
                .chain(nodes -> quarantine.current(authorization).map(q -> {
                    List<NodeInfo> page = nodes.size() <= limit ? nodes : nodes.subList(0, limit);
                    Map<String, PlacementQuarantine.Quarantine> byNode = q.orElse(Map.of());
                    List<NodeView> views = page.stream().map(n -> new NodeView(n, byNode.get(n.name()))).toList();
                    return new NodePage(views, nodes.size() <= limit ? null : encodeCursor(page.getLast().name()), q.isPresent());
                }));
    }

    static String encodeCursor(String lastName) {
        return Base64.getUrlEncoder().withoutPadding().encodeToString(("after:" + lastName).getBytes(StandardCharsets.UTF_8));
    }

    static String decodeCursor(String cursor) {
        try {
            String text = new String(Base64.getUrlDecoder().decode(cursor), StandardCharsets.UTF_8);
            if (text.startsWith("after:")) {
                return text.substring("after:".length());
            }
        } catch (IllegalArgumentException e) {
            // falls through to the error below
        }
        throw InvalidRequestException.badRequest("cursor", "is not a cursor this API returned");
    }

    private static NotFoundException notFound(String name) {
        return new NotFoundException("no node named " + name);
    }
}
