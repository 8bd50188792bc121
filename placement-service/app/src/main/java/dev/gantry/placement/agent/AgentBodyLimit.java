package dev.gantry.placement.agent;

import dev.gantry.kit.problem.Problem;
import jakarta.ws.rs.container.ContainerRequestContext;
import jakarta.ws.rs.core.HttpHeaders;
import jakarta.ws.rs.core.Response;
import java.io.IOException;
import java.util.List;
import java.util.Optional;
import org.jboss.resteasy.reactive.server.ServerRequestFilter;

/**
 * A report larger than {@value #MAX_REPORT_BYTES} bytes is refused with 413 problem+json: by its
 * declared length before it is read, and a body sent without one by its size once read, before it
 * is parsed. (A legitimate report is a few hundred bytes plus a log tail of at most 16 KiB.)
 */
public class AgentBodyLimit {

    static final int MAX_REPORT_BYTES = 64 * 1024;

    @ServerRequestFilter(preMatching = true)
    public Optional<Response> declared(ContainerRequestContext request) {
        if (!request.getUriInfo().getPath().startsWith("/v1/agent/")) {
            return Optional.empty();
        }
        String length = request.getHeaderString(HttpHeaders.CONTENT_LENGTH);
        if (length == null) {
            return Optional.empty();
        }
        try {
            return tooLarge(Long.parseLong(length.trim()));
        } catch (NumberFormatException e) {
            return Optional.of(Problem.of(400, "Bad Request", "Content-Length is not a number", List.of()).toResponse());
        }
    }

    @ServerRequestFilter(readBody = true)
    public Optional<Response> read(ContainerRequestContext request) throws IOException {
        if (!request.getUriInfo().getPath().startsWith("/v1/agent/") || request.getHeaderString(HttpHeaders.CONTENT_LENGTH) != null
                || !request.hasEntity()) {
            return Optional.empty();
        }
        return tooLarge(request.getEntityStream().available());
    }

    private static Optional<Response> tooLarge(long bytes) {
        if (bytes <= MAX_REPORT_BYTES) {
            return Optional.empty();
        }
        return Optional.of(Problem.of(413, "Content Too Large",
                "an agent's request is at most " + MAX_REPORT_BYTES + " bytes; this one has " + bytes, List.of()).toResponse());
    }
}
