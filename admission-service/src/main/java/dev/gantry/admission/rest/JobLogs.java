package dev.gantry.admission.rest;

import dev.gantry.admission.JobAdmission;
import dev.gantry.admission.console.PlacementClient;
import dev.gantry.admission.domain.Caller;
import dev.gantry.kit.problem.InvalidRequestException;
import dev.gantry.kit.problem.Problem;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.ws.rs.WebApplicationException;
import java.util.List;
import java.util.UUID;
import java.util.regex.Pattern;
import org.eclipse.microprofile.rest.client.inject.RestClient;
import org.jboss.logging.Logger;

/**
 * A job's tasks' output (issue 21) for whoever may see the job, as the job view decides (404
 * otherwise, before placement is asked): the node agents ship it to placement, which keeps it, and
 * admission reads it there with its service token.
 */
@ApplicationScoped
public class JobLogs {

    private static final Logger LOG = Logger.getLogger(JobLogs.class);
    /** The most one answer returns of one task (placement's bound too). */
    static final int MAX_LIMIT = 256 * 1024;
    private static final Pattern TASK = Pattern.compile("[A-Za-z0-9]([A-Za-z0-9._-]{0,251}[A-Za-z0-9])?");

    private final JobAdmission admission;
    private final PlacementClient placement;

    public JobLogs(JobAdmission admission, @RestClient PlacementClient placement) {
        this.admission = admission;
        this.placement = placement;
    }

    public Uni<PlacementClient.JobLog> read(UUID id, Caller caller, Long attempt, String task, long offset, int limit) {
        if (task != null && !TASK.matcher(task).matches()) {
            throw InvalidRequestException.badRequest("task", "is not a task name such as worker-0");
        }
        if (offset < 0) {
            throw InvalidRequestException.badRequest("offset", "must be 0 or more");
        }
        if (offset > 0 && task == null) {
            throw InvalidRequestException.badRequest("offset", "is given with task only (each task's output has offsets of its own)");
        }
        if (limit < 1 || limit > MAX_LIMIT) {
            throw InvalidRequestException.badRequest("limit", "must be 1.." + MAX_LIMIT);
        }
        if (attempt != null && attempt < 0) {
            throw InvalidRequestException.badRequest("attempt", "must be 0 or more");
        }
        // the job view's authorization: not visible to the caller -> 404, and placement is never asked
        return admission.find(id, caller).chain(job -> placement.taskLogs(id, attempt, task, offset, limit)
                .onFailure(e -> !(e instanceof InvalidRequestException)).transform(e -> {
                    LOG.warnf("reading the output of job %s from placement: %s", id, e.toString());
                    return new WebApplicationException(Problem.of(503, "Service Unavailable",
                            "the tasks' output is kept by placement-service, which cannot be read right now; retry shortly", List.of())
                            .toResponse());
                }));
    }
}
