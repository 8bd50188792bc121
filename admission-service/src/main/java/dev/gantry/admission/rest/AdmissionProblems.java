package dev.gantry.admission.rest;

import dev.gantry.admission.quota.QuotaUnavailableException;
import dev.gantry.kit.problem.Problem;
import jakarta.ws.rs.core.Response;
import java.util.List;
import org.jboss.resteasy.reactive.server.ServerExceptionMapper;

/** Problems particular to admission. */
public class AdmissionProblems {

    static final int RETRY_AFTER_SECONDS = 10;

    @ServerExceptionMapper
    public Response quotaUnavailable(QuotaUnavailableException e) {
        Response problem = Problem.of(503, "Service Unavailable",
                "the quota check is unavailable right now, nothing was stored; retry in " + RETRY_AFTER_SECONDS + " s",
                List.of()).toResponse();
        return Response.fromResponse(problem).header("Retry-After", RETRY_AFTER_SECONDS).build();
    }
}
