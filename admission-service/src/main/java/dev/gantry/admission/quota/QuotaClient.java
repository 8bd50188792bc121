package dev.gantry.admission.quota;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import dev.gantry.admission.security.ServiceTokenHeaders;
import io.quarkus.rest.client.reactive.ClientExceptionMapper;
import io.smallrye.mutiny.Uni;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.core.Response;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import org.eclipse.microprofile.rest.client.annotation.RegisterClientHeaders;
import org.eclipse.microprofile.rest.client.inject.RegisterRestClient;

/** quota-service's admission check: may this user put this job in this queue? */
@Path("/v1/admission-checks")
@RegisterRestClient(configKey = "quota")
@RegisterClientHeaders(ServiceTokenHeaders.class)
public interface QuotaClient {

    /** {@code priority}: the number the job asks for, null when it names none (0). */
    /** {@code migratable}: the job asks to be movable while it runs (its queue may forbid that). */
    /** {@code jobId}: the id the job will be stored under (quota reserves its place among the user's pending jobs). */
    record CheckRequest(String user, String team, Set<String> teams, String queue, Resources resources, String priorityClass,
            Integer priority, boolean migratable, UUID jobId) {
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

    record Batch(List<CheckRequest> checks) {
    }

    /** One check's answer in a batch: {@code status} 200 with {@code answer}, or 400 with {@code detail}. */
    @JsonIgnoreProperties(ignoreUnknown = true)
    record BatchAnswer(int status, CheckResult answer, String detail) {
    }

    @JsonIgnoreProperties(ignoreUnknown = true)
    record BatchResult(List<BatchAnswer> results) {
    }

    /** Several checks in one request, answered in order (quota's {@code /v1/admission-checks/batch}). */
    @POST
    @Path("/batch")
    Uni<BatchResult> checkAll(Batch batch);

    /** A 4xx is quota saying the request is wrong, not quota being down (5xx, timeouts, refused connections). */
    @ClientExceptionMapper
    static RuntimeException refused(Response response) {
        if (response.getStatus() >= 400 && response.getStatus() < 500) {
            String body = response.hasEntity() ? response.readEntity(String.class) : "";
            return new QuotaRefusedRequestException(response.getStatus(), body.length() > 500 ? body.substring(0, 500) : body);
        }
        return null; // the client's default: a WebApplicationException, which counts as a failure
    }
}
