package dev.gantry.quota.rest;

import dev.gantry.contracts.validation.FieldViolation;
import dev.gantry.kit.problem.InvalidRequestException;
import dev.gantry.quota.domain.QueueSpec;
import dev.gantry.quota.persistence.QueueEntity;
import io.quarkus.hibernate.reactive.panache.Panache;
import io.smallrye.mutiny.Uni;
import jakarta.validation.Valid;
import jakarta.validation.constraints.NotNull;
import jakarta.validation.constraints.Positive;
import jakarta.validation.constraints.PositiveOrZero;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.NotFoundException;
import jakarta.ws.rs.PUT;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import java.util.ArrayList;
import java.util.List;

/** Queues: create or replace by name, read one, list all. */
@Path("/v1/queues")
@Produces(MediaType.APPLICATION_JSON)
public class QueueResource {

    /** Body of {@code PUT /v1/queues/{name}}; the name comes from the path. Omitted fields take the scenario format's defaults. */
    public record QueueRequest(String parent, @Positive Integer weight, @PositiveOrZero Integer guaranteeGpus,
            @PositiveOrZero Integer capabilityGpus, Boolean reclaimable, QueueSpec.QueueState state) {

        QueueSpec toSpec(String name) {
            return new QueueSpec(name, parent, weight == null ? 1 : weight, guaranteeGpus == null ? 0 : guaranteeGpus,
                    capabilityGpus, reclaimable == null || reclaimable, state == null ? QueueSpec.QueueState.OPEN : state);
        }
    }

    @PUT
    @Path("/{name}")
    @Consumes(MediaType.APPLICATION_JSON)
    public Uni<QueueSpec> put(@PathParam("name") String name, @Valid @NotNull QueueRequest request) {
        QueueSpec spec = request.toSpec(name);
        List<FieldViolation> violations = new ArrayList<>(spec.violations());
        if (!violations.isEmpty()) {
            throw InvalidRequestException.unprocessable(violations);
        }
        return Panache.withTransaction(() -> checkParentExists(spec)
                .chain(() -> QueueEntity.<QueueEntity>findById(name))
                .chain(existing -> {
                    QueueEntity queue = existing != null ? existing : new QueueEntity();
                    queue.apply(spec);
                    return queue.<QueueEntity>persist();
                }))
                .map(QueueEntity::toSpec);
    }

    @GET
    @Path("/{name}")
    public Uni<QueueSpec> get(@PathParam("name") String name) {
        return Panache.withSession(() -> QueueEntity.<QueueEntity>findById(name))
                .onItem().ifNull().failWith(() -> new NotFoundException("no queue named " + name))
                .map(QueueEntity::toSpec);
    }

    @GET
    public Uni<List<QueueSpec>> list() {
        return Panache.withSession(() -> QueueEntity.<QueueEntity>listAll())
                .map(queues -> queues.stream().map(QueueEntity::toSpec).toList());
    }

    private static Uni<Void> checkParentExists(QueueSpec spec) {
        if (spec.parent() == null) {
            return Uni.createFrom().voidItem();
        }
        return QueueEntity.<QueueEntity>findById(spec.parent()).map(parent -> {
            if (parent == null) {
                throw InvalidRequestException.unprocessable("parent", "no queue named " + spec.parent());
            }
            return null;
        });
    }
}
