package dev.gantry.admission.console;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import dev.gantry.admission.security.ServiceTokenHeaders;
import io.smallrye.mutiny.Uni;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.QueryParam;
import java.time.Instant;
import java.util.List;
import org.eclipse.microprofile.rest.client.annotation.RegisterClientHeaders;
import org.eclipse.microprofile.rest.client.inject.RegisterRestClient;

/** node-inventory-service's node list, as far as the console draws it. */
@Path("/v1/nodes")
@RegisterRestClient(configKey = "inventory")
@RegisterClientHeaders(ServiceTokenHeaders.class)
public interface InventoryClient {

    /** Only what the heat map needs; the inventory's other fields are ignored, so it may grow. */
    @JsonIgnoreProperties(ignoreUnknown = true)
    record Node(String name, String gpuModel, int gpus, List<List<Integer>> nvlinkIslands, boolean gpuSharing,
            Topology topology, boolean schedulable, boolean cordoned, String health, Quarantine quarantine, boolean simulated) {
    }

    /** Why placement left the node out of scheduling (inventory asks placement); null: not quarantined. */
    @JsonIgnoreProperties(ignoreUnknown = true)
    record Quarantine(String reason, Instant since) {
    }

    @JsonIgnoreProperties(ignoreUnknown = true)
    record Topology(String zone, String spine, String leaf) {
    }

    @JsonIgnoreProperties(ignoreUnknown = true)
    record NodePage(List<Node> items, String nextCursor) {
    }

    @GET
    Uni<NodePage> nodes(@QueryParam("limit") int limit, @QueryParam("cursor") String cursor);
}
