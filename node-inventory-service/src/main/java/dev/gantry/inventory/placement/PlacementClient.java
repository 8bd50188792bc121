package dev.gantry.inventory.placement;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import io.smallrye.mutiny.Uni;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.HeaderParam;
import jakarta.ws.rs.Path;
import java.time.Instant;
import java.util.List;
import org.eclipse.microprofile.rest.client.inject.RegisterRestClient;

/** placement-service's {@code GET /v1/quarantined-nodes}: the nodes its last window left out, with why. */
@Path("/v1/quarantined-nodes")
@RegisterRestClient(configKey = "placement")
public interface PlacementClient {

    @JsonIgnoreProperties(ignoreUnknown = true)
    record Entry(String node, String reason, Instant since) {
    }

    /** {@code authorization} is the caller's own bearer token: placement decides whether it may read this. */
    @GET
    Uni<List<Entry>> quarantined(@HeaderParam("Authorization") String authorization);
}
