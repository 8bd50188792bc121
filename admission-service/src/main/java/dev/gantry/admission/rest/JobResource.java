package dev.gantry.admission.rest;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import dev.gantry.admission.forecast.StartTimes;
import dev.gantry.admission.JobAdmission;
import dev.gantry.admission.JobQuery;
import dev.gantry.admission.domain.Caller;
import dev.gantry.admission.domain.InvalidSpecException;
import dev.gantry.admission.domain.JobSpec;
import dev.gantry.admission.domain.JobState;
import dev.gantry.admission.domain.VolcanoJob;
import dev.gantry.admission.security.Callers;
import dev.gantry.admission.security.RequestLimits;
import dev.gantry.admission.streams.OpenStreams;
import dev.gantry.kit.problem.InvalidRequestException;
import io.quarkus.security.Authenticated;
import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;
import jakarta.validation.Valid;
import jakarta.validation.constraints.Max;
import jakarta.validation.constraints.Min;
import jakarta.validation.constraints.NotNull;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.DELETE;
import jakarta.ws.rs.DefaultValue;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import java.net.URI;
import java.util.List;
import java.util.UUID;
import org.jboss.resteasy.reactive.RestHeader;
import org.jboss.resteasy.reactive.RestStreamElementType;

/** Jobs over REST: submit (JSON or a Volcano Job in YAML), read, list, cancel, follow. */
@Path("/v1/jobs")
@Produces(MediaType.APPLICATION_JSON)
@Authenticated
public class JobResource {

    static final String YAML = "application/yaml";
    private static final YAMLMapper YAML_MAPPER = new YAMLMapper();

    private final JobAdmission admission;
    private final Callers callers;
    private final RequestLimits limits;
    private final OpenStreams streams;
    private final StartTimes startTimes;
    private final JobLogs logs;

    public JobResource(JobAdmission admission, Callers callers, RequestLimits limits, OpenStreams streams, StartTimes startTimes,
            JobLogs logs) {
        this.streams = streams;
        this.startTimes = startTimes;
        this.logs = logs;
        this.admission = admission;
        this.callers = callers;
        this.limits = limits;
    }

    @POST
    @Consumes(MediaType.APPLICATION_JSON)
    public Uni<Response> submit(@Valid @NotNull JobSubmission submission, @RestHeader("Idempotency-Key") String idempotencyKey) {
        return submit(submission.toSpec(), idempotencyKey);
    }

    /** A Volcano {@code batch.volcano.sh/v1alpha1} Job manifest, as users already have them. */
    @POST
    @Consumes({YAML, "application/x-yaml", "text/yaml"})
    public Uni<Response> submitVolcanoJob(String manifest, @RestHeader("Idempotency-Key") String idempotencyKey) {
        JsonNode tree;
        try {
            tree = YAML_MAPPER.readTree(manifest);
        } catch (JsonProcessingException e) {
            throw InvalidRequestException.badRequest("body", "not readable YAML: " + e.getOriginalMessage());
        }
        if (tree == null || !tree.isObject()) {
            throw InvalidRequestException.badRequest("body", "expected one YAML document describing a Volcano Job");
        }
        try {
            return submit(VolcanoJob.toSpec(tree), idempotencyKey);
        } catch (InvalidSpecException e) {
            throw InvalidRequestException.unprocessable(e.violations());
        }
    }

    private Uni<Response> submit(JobSpec spec, String idempotencyKey) {
        Caller caller = callers.current();
        var overRate = limits.overRate(caller.user());
        if (overRate.isPresent()) {
            return Uni.createFrom().item(overRate.get());
        }
        return admission.submit(spec, caller, idempotencyKey)
                .map(submitted -> submitted.replayed()
                        ? Response.ok(JobView.of(submitted.job())).build()
                        : Response.created(URI.create("/v1/jobs/" + submitted.job().id)).entity(JobView.of(submitted.job())).build());
    }

    @GET
    @Path("/{id}")
    public Uni<JobView> get(@PathParam("id") UUID id) {
        Caller caller = callers.current();
        return admission.find(id, caller).chain(job -> startTimes.of(job, caller).map(f -> JobView.of(job, f)));
    }

    @GET
    public Uni<JobPage> list(@QueryParam("queue") String queue, @QueryParam("state") JobState state,
            @QueryParam("user") String user, @QueryParam("cursor") String cursor,
            @QueryParam("limit") @DefaultValue("50") @Min(1) @Max(500) int limit) {
        JobQuery query = JobQuery.page(queue, state, user, cursor, limit);
        Caller caller = callers.current();
        return admission.list(query, caller).chain(jobs -> startTimes.of(jobs, caller).map(forecasts -> new JobPage(
                jobs.stream().map(j -> JobView.of(j, forecasts.get(j.id))).toList(), query.nextCursor(jobs))));
    }

    /** What happened to the job, oldest first: submitted, placed, preempted or requeued and why, ended. */
    @GET
    @Path("/{id}/history")
    public Uni<List<JobHistoryStep>> history(@PathParam("id") UUID id) {
        return admission.history(id, callers.current()).map(steps -> steps.stream().map(JobHistoryStep::of).toList());
    }

    /**
     * The output of the job's tasks that ran on node agents: the latest attempt unless {@code attempt}
     * names one, every task unless {@code task} names one; from byte {@code offset} of that task's log
     * (with {@code task}), at most {@code limit} bytes a task. {@code next} is where to read on from.
     */
    @GET
    @Path("/{id}/logs")
    public Uni<dev.gantry.admission.console.PlacementClient.JobLog> logs(@PathParam("id") UUID id, @QueryParam("task") String task,
            @QueryParam("attempt") Long attempt, @QueryParam("offset") @DefaultValue("0") long offset,
            @QueryParam("limit") @DefaultValue("65536") int limit) {
        return logs.read(id, callers.current(), attempt, task, offset, limit);
    }

    @DELETE
    @Path("/{id}")
    public Uni<JobView> cancel(@PathParam("id") UUID id) {
        return admission.cancel(id, callers.current()).map(JobView::of);
    }

    /** Server-Sent Events: the job now, then each change of state or pending reason, until it ends. */
    @GET
    @Path("/{id}/events")
    @Produces(MediaType.SERVER_SENT_EVENTS)
    @RestStreamElementType(MediaType.APPLICATION_JSON)
    public Multi<JobView> events(@PathParam("id") UUID id) {
        Caller caller = callers.current();
        return streams.open(caller, () -> admission.watch(id, caller).map(JobView::of));
    }
}
