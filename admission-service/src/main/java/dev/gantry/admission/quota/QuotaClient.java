package dev.gantry.admission.quota;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import dev.gantry.admission.security.ServiceTokenHeaders;
import io.smallrye.mutiny.Uni;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import java.util.Set;
import org.eclipse.microprofile.rest.client.annotation.RegisterClientHeaders;
import org.eclipse.microprofile.rest.client.inject.RegisterRestClient;

/** quota-service's admission check: may this user put this job in this queue? */
@Path("/v1/admission-checks")
@RegisterRestClient(configKey = "quota")
@RegisterClientHeaders(ServiceTokenHeaders.class)
public interface QuotaClient {

    record CheckRequest(String user, String team, Set<String> teams, String queue, Resources resources, String priorityClass) {
    }

    record Resources(int gpus, String gpuModel, long cpuMillis, long memoryMiB) {
    }

    /**
     * {@code reason} is a typed code (QueueNotFound, QueueClosed, NotMember, ExceedsJobLimit, ...) when not allowed;
     * {@code priority} is the value of the job's priority class, when quota knows it.
     */
    @JsonIgnoreProperties(ignoreUnknown = true)
    record CheckResult(boolean allowed, String reason, String message, Integer priority) {
    }

    @POST
    Uni<CheckResult> check(CheckRequest request);
}
