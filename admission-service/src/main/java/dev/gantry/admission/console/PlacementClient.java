package dev.gantry.admission.console;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import dev.gantry.admission.security.ServiceTokenHeaders;
import io.smallrye.mutiny.Uni;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.QueryParam;
import java.time.Instant;
import java.util.List;
import java.util.UUID;
import org.eclipse.microprofile.rest.client.annotation.RegisterClientHeaders;
import org.eclipse.microprofile.rest.client.inject.RegisterRestClient;

/** placement-service's read-only views: which GPUs each placed job holds; when waiting jobs are expected to start. */
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

    /** One waiting job's start-time forecast: {@code startAt} null when unknown; {@code basis} reservation, releases, now or unknown. */
    @JsonIgnoreProperties(ignoreUnknown = true)
    record StartForecast(UUID jobId, Instant startAt, String basis, List<UUID> waitsFor, String note) {
    }

    /**
     * The leading replica's last forecasts (any replica answers); {@code computedAt} null: none yet;
     * {@code stale} (with {@code staleReason}): older than three forecast periods, every start unknown
     * (null from a placement service that does not say).
     */
    @JsonIgnoreProperties(ignoreUnknown = true)
    record StartForecastPage(Instant computedAt, int maxJobs, List<StartForecast> items, Boolean stale, String staleReason) {
    }

    /** The forecasts of {@code jobs} (all when empty). */
    @GET
    @Path("/start-forecasts")
    Uni<StartForecastPage> startForecasts(@QueryParam("job") List<String> jobs);

    /** One task's output from {@code from} to {@code next} (bytes of its log); {@code end}: all shipped so far. */
    @JsonIgnoreProperties(ignoreUnknown = true)
    record TaskLog(String task, String node, long from, long next, long end, long dropped, String text) {
    }

    /** The output of one attempt of a job ({@code attempts}: every attempt with output, oldest first). */
    @JsonIgnoreProperties(ignoreUnknown = true)
    record JobLog(UUID jobId, Long attempt, List<Long> attempts, List<TaskLog> tasks) {
    }

    /** What the node agents shipped of a job's tasks' output (issue 21). */
    @GET
    @Path("/task-logs/{jobId}")
    Uni<JobLog> taskLogs(@jakarta.ws.rs.PathParam("jobId") UUID jobId, @jakarta.ws.rs.QueryParam("attempt") Long attempt,
            @jakarta.ws.rs.QueryParam("task") String task, @jakarta.ws.rs.QueryParam("offset") long offset,
            @jakarta.ws.rs.QueryParam("limit") int limit);
}
