package dev.gantry.admission.console;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import dev.gantry.admission.security.ServiceTokenHeaders;
import io.smallrye.mutiny.Uni;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import java.util.List;
import org.eclipse.microprofile.rest.client.annotation.RegisterClientHeaders;
import org.eclipse.microprofile.rest.client.inject.RegisterRestClient;

/** quota-service's queues and their fair-share status (the same service as the admission check). */
@Path("/v1/queues")
@RegisterRestClient(configKey = "quota")
@RegisterClientHeaders(ServiceTokenHeaders.class)
public interface QueuesClient {

    @JsonIgnoreProperties(ignoreUnknown = true)
    record Queue(String name, String parent, int weight) {
    }

    /** GPUs of one figure (null: unbounded) and the sentence quota-service gives for it. */
    @JsonIgnoreProperties(ignoreUnknown = true)
    record Figure(Double gpus, String reason) {
    }

    @JsonIgnoreProperties(ignoreUnknown = true)
    record Usage(double factor, double weight, double effectiveWeight, String reason) {
    }

    @JsonIgnoreProperties(ignoreUnknown = true)
    record Status(String queue, String parent, String state, boolean reclaimable, Figure capacity, Figure guarantee,
            Figure capability, Figure deserved, Figure allocated, Figure borrowed, Figure pending, Usage usage) {
    }

    @GET
    Uni<List<Queue>> queues();

    @GET
    @Path("/{name}/status")
    Uni<Status> status(@PathParam("name") String name);
}
