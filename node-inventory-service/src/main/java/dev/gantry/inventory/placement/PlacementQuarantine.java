package dev.gantry.inventory.placement;

import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.eclipse.microprofile.rest.client.inject.RestClient;
import org.jboss.logging.Logger;

/**
 * Which nodes placement has quarantined, asked when a node is read. Quarantine is placement's
 * judgment of its last window, kept in its memory and found again every window; asking at read
 * time shows exactly that (a copy kept here from events could outlive a placement restart). When
 * placement does not answer in time, the nodes are still served, marked as not knowing.
 */
@ApplicationScoped
public class PlacementQuarantine {

    private static final Logger LOG = Logger.getLogger(PlacementQuarantine.class);
    private static final Duration WAIT = Duration.ofMillis(1500);

    /** Why placement left a node out of scheduling, and since when. */
    public record Quarantine(String reason, Instant since) {
    }

    private final PlacementClient placement;

    public PlacementQuarantine(@RestClient PlacementClient placement) {
        this.placement = placement;
    }

    /** Node name to its quarantine; empty when placement could not be asked. */
    public Uni<Optional<Map<String, Quarantine>>> current(String authorization) {
        return placement.quarantined(authorization)
                .ifNoItem().after(WAIT).fail()
                .map(entries -> Optional.of(entries.stream().collect(Collectors.toMap(PlacementClient.Entry::node,
                        e -> new Quarantine(e.reason(), e.since()), (a, b) -> a))))
                .onFailure().recoverWithItem((Function<Throwable, Optional<Map<String, Quarantine>>>) e -> {
                    LOG.debugf("placement-service did not say which nodes are quarantined: %s", e.toString());
                    return Optional.empty();
                });
    }
}
