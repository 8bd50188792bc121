package dev.gantry.admission.rest;

import dev.gantry.admission.security.RequestLimits;
import jakarta.ws.rs.core.HttpHeaders;
import jakarta.ws.rs.core.Response;
import java.util.Optional;
import org.jboss.resteasy.reactive.server.ServerRequestFilter;

/** Refuses an oversized body before it is read or parsed. */
public class BodyLimitFilter {

    private final RequestLimits limits;

    public BodyLimitFilter(RequestLimits limits) {
        this.limits = limits;
    }

    @ServerRequestFilter(preMatching = true)
    public Optional<Response> capBodySize(HttpHeaders headers) {
        return limits.tooLarge(headers);
    }
}
