package dev.gantry.admission.security;

import dev.gantry.admission.domain.RateLimiter;
import dev.gantry.kit.problem.Problem;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.ws.rs.core.HttpHeaders;
import jakarta.ws.rs.core.Response;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.eclipse.microprofile.config.inject.ConfigProperty;

/** Limits against abuse: a cap on request size, a per-user submission rate. */
@ApplicationScoped
public class RequestLimits {

    private final long maxBodyBytes;
    private final RateLimiter submissions;

    public RequestLimits(@ConfigProperty(name = "gantry.admission.max-body-bytes", defaultValue = "262144") long maxBodyBytes,
            @ConfigProperty(name = "gantry.admission.submissions-per-minute", defaultValue = "60") int perMinute) {
        this.maxBodyBytes = maxBodyBytes;
        this.submissions = new RateLimiter(perMinute, Duration.ofMinutes(1), Clock.systemUTC());
    }

    /** 413 for a body over the cap (by its declared length), before it is read. */
    public Optional<Response> tooLarge(HttpHeaders headers) {
        List<String> lengths = headers.getRequestHeader(HttpHeaders.CONTENT_LENGTH);
        if (lengths != null && !lengths.isEmpty()) {
            try {
                return tooLarge(Long.parseLong(lengths.getFirst().trim()));
            } catch (NumberFormatException e) {
                return Optional.of(Problem.of(400, "Bad Request", "Content-Length is not a number", List.of()).toResponse());
            }
        }
        return Optional.empty();
    }

    /** 413 for a body of this many bytes if that is over the cap. */
    public Optional<Response> tooLarge(long bodyBytes) {
        if (bodyBytes > maxBodyBytes) {
            return Optional.of(Problem.of(413, "Content Too Large",
                    "a job description is at most " + maxBodyBytes + " bytes", List.of()).toResponse());
        }
        return Optional.empty();
    }

    /** 429 with Retry-After when this user submits faster than allowed. */
    public Optional<Response> overRate(String user) {
        Duration wait = submissions.tryAcquire(user);
        if (wait.isZero()) {
            return Optional.empty();
        }
        long seconds = Math.max(1, (wait.toMillis() + 999) / 1000);
        Response problem = Problem.of(429, "Too Many Requests",
                "you are submitting faster than allowed; retry in " + seconds + " s", List.of()).toResponse();
        return Optional.of(Response.fromResponse(problem).header("Retry-After", seconds).build());
    }
}
