package dev.gantry.placement.agent;

import dev.gantry.kit.problem.InvalidRequestException;
import dev.gantry.kit.security.GantryRoles;
import dev.gantry.kit.security.NodeScope;
import dev.gantry.placement.agent.AgentAssignments.Assignments;
import io.quarkus.security.identity.SecurityIdentity;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.core.Vertx;
import jakarta.annotation.security.RolesAllowed;
import jakarta.validation.Valid;
import jakarta.validation.constraints.NotBlank;
import jakarta.validation.constraints.NotNull;
import jakarta.validation.constraints.Pattern;
import jakarta.validation.constraints.Size;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.MediaType;
import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.UUID;

/**
 * The node agents' side of placement (issue 21): an agent long-polls the tasks placed on its node
 * and reports what became of them. Agents speak for their own node only (403 otherwise, before
 * anything is read or written); admins may act for any node.
 */
@Path("/v1/agent")
@Produces(MediaType.APPLICATION_JSON)
public class AgentResource {

    /** The longest a long poll is held. */
    static final Duration MAX_WAIT = Duration.ofSeconds(60);
    /** How often a held long poll looks at the database again. */
    static final long POLL_MILLIS = 250;
    /** The longest log tail a report may carry. */
    static final int MAX_LOG_TAIL = 16 * 1024;

    private final AgentAssignments assignments;
    private final AgentReports reports;
    private final AgentLogs logs;
    private final SecurityIdentity identity;
    private final Vertx vertx;

    public AgentResource(AgentAssignments assignments, AgentReports reports, AgentLogs logs, SecurityIdentity identity, Vertx vertx) {
        this.assignments = assignments;
        this.reports = reports;
        this.logs = logs;
        this.identity = identity;
        this.vertx = vertx;
    }

    /**
     * The tasks placed on {@code node}. With {@code wait} (e.g. {@code 30s}, at most 60 s) and
     * {@code known} (the {@code version} of the last answer), held until they differ from that
     * answer or the wait is over.
     */
    @GET
    @Path("/assignments")
    @RolesAllowed({GantryRoles.AGENT, GantryRoles.ADMIN})
    public Uni<Assignments> assignments(@QueryParam("node") String node, @QueryParam("wait") String wait,
            @QueryParam("known") String known) {
        if (node == null || node.isBlank()) {
            throw InvalidRequestException.badRequest("node", "is required");
        }
        NodeScope.requireOwnNode(identity, node);
        Duration hold = parseWait(wait);
        long deadline = System.nanoTime() + hold.toNanos();
        return poll(node, known, deadline);
    }

    private Uni<Assignments> poll(String node, String known, long deadline) {
        return assignments.read(node).chain(current -> {
            if (known == null || !known.equals(current.version()) || System.nanoTime() >= deadline) {
                return Uni.createFrom().item(current);
            }
            // a timer set from the request's context fires on it, where the next read may open its session
            return Uni.createFrom().<Long>emitter(e -> vertx.setTimer(POLL_MILLIS, e::complete))
                    .chain(() -> poll(node, known, deadline));
        });
    }

    static Duration parseWait(String wait) {
        if (wait == null || wait.isBlank()) {
            return Duration.ZERO;
        }
        Duration d;
        try {
            d = wait.matches("\\d+") ? Duration.ofSeconds(Long.parseLong(wait))
                    : Duration.parse("PT" + wait.toUpperCase(java.util.Locale.ROOT));
        } catch (DateTimeParseException | NumberFormatException e) {
            throw InvalidRequestException.badRequest("wait", "is not a duration such as 30s");
        }
        if (d.isNegative() || d.compareTo(MAX_WAIT) > 0) {
            throw InvalidRequestException.badRequest("wait", "must be 0s..60s");
        }
        return d;
    }

    /** What became of one task; {@code exitCode} with {@code EXITED} only. */
    public record TaskReport(
            @NotNull UUID jobId,
            @NotNull Long attempt,
            @NotBlank @Size(max = 253) @Pattern(regexp = "[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?") String task,
            @NotNull AgentReports.State state,
            Integer exitCode,
            @Size(max = MAX_LOG_TAIL) String logTail) {
    }

    @POST
    @Path("/reports")
    @Consumes(MediaType.APPLICATION_JSON)
    @RolesAllowed({GantryRoles.AGENT, GantryRoles.ADMIN})
    public Uni<AgentReports.Outcome> report(@Valid @NotNull TaskReport report) {
        if (report.state() == AgentReports.State.EXITED && report.exitCode() == null) {
            throw InvalidRequestException.badRequest("exitCode", "is required when state is EXITED");
        }
        if (report.state() != AgentReports.State.EXITED && report.exitCode() != null) {
            throw InvalidRequestException.badRequest("exitCode", "is given only when state is EXITED");
        }
        if (report.exitCode() != null && (report.exitCode() < 0 || report.exitCode() > 255)) {
            throw InvalidRequestException.badRequest("exitCode", "must be 0..255 (a signal's death is 128 + its number)");
        }
        return reports.apply(report.jobId(), report.attempt(), report.task(), report.state(), report.exitCode(), report.logTail(),
                node -> NodeScope.requireOwnNode(identity, node));
    }

    /** Bytes {@code [offset, offset + |data|)} of a task's log file; {@code data} in base64, at most 32 KiB decoded. */
    public record LogChunk(
            @NotNull UUID jobId,
            @NotNull Long attempt,
            @NotBlank @Size(max = 253) @Pattern(regexp = "[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?") String task,
            @NotNull @jakarta.validation.constraints.PositiveOrZero Long offset,
            @NotNull String data) {
    }

    /**
     * A chunk of a task's output. The answer says whether it was taken and where the stream ends
     * ({@code next}): a chunk that does not start there changes nothing, and the agent goes on from
     * {@code next}.
     */
    @POST
    @Path("/logs")
    @Consumes(MediaType.APPLICATION_JSON)
    @RolesAllowed({GantryRoles.AGENT, GantryRoles.ADMIN})
    public Uni<AgentLogs.Appended> log(@Valid @NotNull LogChunk chunk) {
        byte[] bytes;
        try {
            bytes = java.util.Base64.getDecoder().decode(chunk.data());
        } catch (IllegalArgumentException e) {
            throw InvalidRequestException.badRequest("data", "is not base64");
        }
        if (bytes.length > AgentLogs.MAX_CHUNK_BYTES) {
            throw InvalidRequestException.badRequest("data", "carries at most " + AgentLogs.MAX_CHUNK_BYTES + " bytes");
        }
        return logs.append(chunk.jobId(), chunk.attempt(), chunk.task(), chunk.offset(), bytes,
                node -> NodeScope.requireOwnNode(identity, node));
    }
}
