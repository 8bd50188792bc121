package dev.gantry.inventory.rest;

import dev.gantry.inventory.ClusterFiles;
import dev.gantry.inventory.NodeRegistry;
import dev.gantry.kit.security.GantryRoles;
import io.smallrye.mutiny.Uni;
import jakarta.annotation.security.RolesAllowed;
import org.eclipse.microprofile.openapi.annotations.Operation;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.HeaderParam;
import jakarta.ws.rs.NotFoundException;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.EntityTag;
import jakarta.ws.rs.core.HttpHeaders;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;

/** The whole cluster at once: the declarative cluster file, and the snapshot placement plans on. */
@Path("/v1")
@Produces(MediaType.APPLICATION_JSON)
public class ClusterResource {

    private final ClusterFiles clusterFiles;
    private final NodeRegistry registry;

    public ClusterResource(ClusterFiles clusterFiles, NodeRegistry registry) {
        this.clusterFiles = clusterFiles;
        this.registry = registry;
    }

    /**
     * {@code POST /v1/cluster:apply}: applies a cluster file (JSON, or YAML with a YAML content type);
     * nodes it brought earlier and no longer lists are removed. Quarkus REST does not route a literal
     * path segment holding a colon, so the segment is matched here.
     */
    @POST
    @Path("/{action}")
    @Operation(summary = "Apply a cluster file (JSON or YAML nodes of the scenario format): POST /v1/cluster:apply")
    @Consumes({MediaType.APPLICATION_JSON, "application/yaml", "application/x-yaml", "text/yaml"})
    @RolesAllowed({GantryRoles.ADMIN})
    public Uni<NodeRegistry.ApplyResult> apply(@PathParam("action") String action,
            @HeaderParam(HttpHeaders.CONTENT_TYPE) String contentType, String body) {
        if (!action.equals("cluster:apply")) {
            throw new NotFoundException("no such action: POST /v1/cluster:apply applies a cluster file");
        }
        boolean yaml = contentType != null && contentType.toLowerCase().contains("yaml");
        return clusterFiles.apply(body, yaml);
    }

    /**
     * Every schedulable Ready node with the version it is as of. The version is the ETag: a client
     * that sends it back in {@code If-None-Match} gets 304 until something changes.
     */
    @GET
    @Path("/snapshot")
    @RolesAllowed({GantryRoles.ADMIN, GantryRoles.SERVICE})
    public Uni<Response> snapshot(@HeaderParam(HttpHeaders.IF_NONE_MATCH) String ifNoneMatch) {
        return registry.version().chain(current -> {
            if (matches(ifNoneMatch, current)) {
                return Uni.createFrom().item(Response.notModified(etag(current)).build());
            }
            return registry.snapshot().map(snapshot -> Response.ok(snapshot).tag(etag(snapshot.version())).build());
        });
    }

    static EntityTag etag(long version) {
        return new EntityTag(Long.toString(version));
    }

    /** {@code If-None-Match}: a list of (possibly weak) tags, or *. */
    static boolean matches(String ifNoneMatch, long version) {
        if (ifNoneMatch == null) {
            return false;
        }
        for (String tag : ifNoneMatch.split(",")) {
            String t = tag.trim();
            if (t.startsWith("W/")) {
                t = t.substring(2);
            }
            t = t.replace("\"", "");
            if (t.equals("*") || t.equals(Long.toString(version))) {
                return true;
            }
        }
        return false;
    }

}
