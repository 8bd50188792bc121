package dev.gantry.kit.outbox;

import dev.gantry.kit.security.GantryRoles;
import io.quarkus.hibernate.reactive.panache.Panache;
import io.smallrye.mutiny.Uni;
import jakarta.annotation.security.RolesAllowed;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.NotFoundException;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import java.time.Instant;
import java.util.List;

/**
 * The outbox's dead letters, for an admin: rows the relay gave up on (the broker refused them too
 * often), listed with their last error, and put back in line one by one once the cause is mended.
 */
@Path("/v1/admin/outbox/dead-letters")
@Produces(MediaType.APPLICATION_JSON)
@RolesAllowed(GantryRoles.ADMIN)
public class OutboxAdminResource {

    /** A dead letter as listed: what it is about and why it was set aside; the envelope is not shown (it may be huge). */
    public record DeadLetter(long id, String subject, String subjectId, Instant createdAt, int attempts, String lastError,
            Instant deadLetteredAt, int envelopeBytes) {

        static DeadLetter of(OutboxEvent row) {
            return new DeadLetter(row.id, row.subject, row.subjectId, row.createdAt, row.attempts, row.lastError, row.deadLetteredAt,
                    row.envelope.length());
        }
    }

    @GET
    public Uni<List<DeadLetter>> list() {
        return Panache.withSession(() -> OutboxEvent.<OutboxEvent>find("deadLetteredAt is not null and publishedAt is null order by id")
                .page(0, 500).list()).map(rows -> rows.stream().map(DeadLetter::of).toList());
    }

    /** Back in line: the relay tries it again, from zero attempts. */
    @POST
    @Path("/{id}/retry")
    public Uni<DeadLetter> retry(@PathParam("id") long id) {
        return Panache.withTransaction(() -> OutboxEvent.<OutboxEvent>findById(id).map(row -> {
            if (row == null || row.deadLetteredAt == null || row.publishedAt != null) {
                throw new NotFoundException("no dead letter with id " + id);
            }
            row.deadLetteredAt = null;
            row.attempts = 0;
            return DeadLetter.of(row);
        }));
    }
}
