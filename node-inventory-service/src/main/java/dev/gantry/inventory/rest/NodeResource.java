package dev.gantry.inventory.rest;

import dev.gantry.contracts.nodes.NodeInfo;
import dev.gantry.inventory.NodeRegistry;
import io.smallrye.mutiny.Uni;
import jakarta.validation.Valid;
import jakarta.validation.constraints.Max;
import jakarta.validation.constraints.Min;
import jakarta.validation.constraints.NotNull;
import jakarta.validation.constraints.PositiveOrZero;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.NotFoundException;
import jakarta.ws.rs.PUT;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import java.util.List;
import java.util.Map;

/** The agent API: a node registers or updates itself by name; anyone may read the inventory. */
@Path("/v1/nodes")
@Produces(MediaType.APPLICATION_JSON)
public class NodeResource {

    /** Body of {@code PUT /v1/nodes/{name}}, the node of the scenario format; omitted fields take its defaults. */
    public record NodeRequest(
            String gpuModel,
            @Min(0) @Max(64) int gpus,
            List<List<Integer>> nvlinkIslands,
            List<List<Integer>> numaNodes,
            Boolean gpuSharing,
            @PositiveOrZero long cpuMillis,
            @PositiveOrZero long memoryMiB,
            NodeInfo.Topology topology,
            String ibFabric,
            Map<String, String> labels,
            List<NodeInfo.Taint> taints,
            Boolean schedulable) {

        NodeInfo toInfo(String name) {
            return new NodeInfo(name, gpuModel, gpus,
                    nvlinkIslands != null ? nvlinkIslands : List.of(),
                    numaNodes != null ? numaNodes : List.of(),
                    Boolean.TRUE.equals(gpuSharing), cpuMillis, memoryMiB,
                    topology != null ? topology : new NodeInfo.Topology(null, null, null),
                    ibFabric, labels != null ? labels : Map.of(), taints != null ? taints : List.of(),
                    schedulable == null || schedulable, NodeInfo.Health.READY);
        }
    }

    private final NodeRegistry registry;

    public NodeResource(NodeRegistry registry) {
        this.registry = registry;
    }

    @PUT
    @Path("/{name}")
    @Consumes(MediaType.APPLICATION_JSON)
    public Uni<NodeInfo> put(@PathParam("name") String name, @Valid @NotNull NodeRequest request) {
        return registry.upsert(request.toInfo(name));
    }

    @GET
    @Path("/{name}")
    public Uni<NodeInfo> get(@PathParam("name") String name) {
        return registry.find(name).onItem().ifNull().failWith(() -> new NotFoundException("no node named " + name));
    }

    @GET
    public Uni<List<NodeInfo>> list() {
        return registry.all();
    }
}
