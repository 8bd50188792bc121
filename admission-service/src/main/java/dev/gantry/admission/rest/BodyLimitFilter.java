package dev.gantry.admission.rest;

import dev.gantry.admission.security.RequestLimits;
import jakarta.ws.rs.container.ContainerRequestContext;
import jakarta.ws.rs.core.HttpHeaders;
import jakarta.ws.rs.core.Response;
import java.io.IOException;
import java.io.InputStream;
import java.util.Optional;
import org.jboss.resteasy.reactive.server.ServerRequestFilter;

/**
 * Refuses an oversized body with 413: by its declared length before it is read; a body sent
 * without one ({@code Transfer-Encoding: chunked}) by its size once read, before it is parsed.
 */
public class BodyLimitFilter {

    private final RequestLimits limits;

    public BodyLimitFilter(RequestLimits limits) {
        this.limits = limits;
    }

    @ServerRequestFilter(preMatching = true)
    public Optional<Response> capDeclaredBodySize(HttpHeaders headers) {
        return limits.tooLarge(headers);
    }

    @ServerRequestFilter(readBody = true)
    public Optional<Response> capBodySize(ContainerRequestContext request) throws IOException {
        if (request.getHeaderString(HttpHeaders.CONTENT_LENGTH) != null || !request.hasEntity()) {
            return Optional.empty(); // checked above, from the header
        }
        InputStream body = request.getEntityStream();
        return limits.tooLarge(body.available());
    }
}
