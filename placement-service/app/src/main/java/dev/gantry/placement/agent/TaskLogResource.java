package dev.gantry.placement.agent;

import dev.gantry.kit.problem.InvalidRequestException;
import dev.gantry.kit.security.GantryRoles;
import io.smallrye.mutiny.Uni;
import jakarta.annotation.security.RolesAllowed;
import jakarta.ws.rs.DefaultValue;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.MediaType;
import java.util.UUID;

/**
 * The tasks' output the agents shipped, for admission (which decides who may see a job) and admins;
 * never for users directly, since placement does not know who may see which job.
 */
@Path("/v1/task-logs")
@Produces(MediaType.APPLICATION_JSON)
public class TaskLogResource {

    private final AgentLogs logs;

    public TaskLogResource(AgentLogs logs) {
        this.logs = logs;
    }

    @GET
    @Path("/{jobId}")
    @RolesAllowed({GantryRoles.SERVICE, GantryRoles.ADMIN})
    public Uni<AgentLogs.JobLog> read(@PathParam("jobId") UUID jobId, @QueryParam("attempt") Long attempt, @QueryParam("task") String task,
            @QueryParam("offset") @DefaultValue("0") long offset, @QueryParam("limit") @DefaultValue("65536") int limit) {
        if (offset < 0) {
            throw InvalidRequestException.badRequest("offset", "must be 0 or more");
        }
        if (limit < 1 || limit > AgentLogs.MAX_READ_BYTES) {
            throw InvalidRequestException.badRequest("limit", "must be 1.." + AgentLogs.MAX_READ_BYTES);
        }
        return logs.read(jobId, attempt, task, offset, limit);
    }
}
