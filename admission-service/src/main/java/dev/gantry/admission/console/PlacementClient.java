package dev.gantry.admission.console;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import dev.gantry.admission.security.ServiceTokenHeaders;
import io.smallrye.mutiny.Uni;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import java.time.Instant;
import java.util.List;
import java.util.UUID;
import org.eclipse.microprofile.rest.client.annotation.RegisterClientHeaders;
import org.eclipse.microprofile.rest.client.inject.RegisterRestClient;

/** placement-service's read-only views: which GPUs each placed job holds. */
@Path("/v1")
@RegisterRestClient(configKey = "placement")
@RegisterClientHeaders(ServiceTokenHeaders.class)
public interface PlacementClient {

    /** One task's GPUs on one node; {@code gpuMilli} null means whole GPUs. */
    @JsonIgnoreProperties(ignoreUnknown = true)
    record Allocation(UUID jobId, String task, String node, List<Integer> gpus, Integer gpuMilli, Instant allocatedAt) {
    }

    @GET
    @Path("/allocations")
    Uni<List<Allocation>> allocations();
}
