package dev.gantry.admission.rest;

import dev.gantry.admission.JobAdmission;
import io.smallrye.mutiny.Uni;
import jakarta.validation.Valid;
import jakarta.validation.constraints.NotNull;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.NotFoundException;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import java.net.URI;
import java.util.UUID;

@Path("/v1/jobs")
@Produces(MediaType.APPLICATION_JSON)
public class JobResource {

    /** Until authentication lands (issue 6), every job is submitted by this user. */
    static final String ANONYMOUS = "anonymous";

    private final JobAdmission admission;

    public JobResource(JobAdmission admission) {
        this.admission = admission;
    }

    @POST
    @Consumes(MediaType.APPLICATION_JSON)
    public Uni<Response> submit(@Valid @NotNull JobSubmission submission) {
        return admission.submit(submission.toSpec(), ANONYMOUS)
                .map(job -> Response.created(URI.create("/v1/jobs/" + job.id)).entity(JobView.of(job)).build());
    }

    @GET
    @Path("/{id}")
    public Uni<JobView> get(@PathParam("id") UUID id) {
        return admission.find(id)
                .onItem().ifNull().failWith(() -> new NotFoundException("no job with id " + id))
                .map(JobView::of);
    }
}
