package dev.gantry.admission.streams;

import dev.gantry.admission.domain.Caller;
import dev.gantry.admission.domain.StreamAllowance;
import dev.gantry.kit.problem.InvalidRequestException;
import dev.gantry.kit.problem.Problem;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.smallrye.mutiny.Multi;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.List;
import java.util.function.Supplier;
import org.eclipse.microprofile.config.inject.ConfigProperty;

/**
 * The per-user limit on live streams (REST job events, gRPC Watch, the console's updates): a stream
 * past it is refused with 429 before it starts; a stream frees its place however it ends.
 */
@ApplicationScoped
public class OpenStreams {

    private final StreamAllowance allowance;

    public OpenStreams(@ConfigProperty(name = "gantry.admission.streams.per-user", defaultValue = "8") int perUser,
            MeterRegistry registry) {
        this.allowance = new StreamAllowance(perUser);
        Gauge.builder("gantry.admission.streams.open", allowance, StreamAllowance::total)
                .description("live streams open on this replica (job events, gRPC Watch, console updates)")
                .register(registry);
    }

    /** Opens {@code stream} for the caller, or throws 429 when the caller already has the limit open. */
    public <T> Multi<T> open(Caller caller, Supplier<Multi<T>> stream) {
        if (!allowance.tryOpen(caller.user())) {
            throw new InvalidRequestException(429, "you have " + allowance.perUser()
                    + " live streams open, the most one user may; close one (a console tab, a watch) and retry",
                    List.of(new Problem.FieldError("streams", "at most " + allowance.perUser() + " open at once per user")));
        }
        try {
            return stream.get().onTermination().invoke(() -> allowance.close(caller.user()));
        } catch (RuntimeException e) {
            allowance.close(caller.user());
            throw e;
        }
    }
}
