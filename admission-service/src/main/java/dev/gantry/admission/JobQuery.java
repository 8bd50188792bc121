package dev.gantry.admission;

import dev.gantry.admission.domain.Caller;
import dev.gantry.admission.domain.JobState;
import dev.gantry.admission.persistence.JobEntity;
import dev.gantry.kit.problem.InvalidRequestException;
import io.quarkus.panache.common.Parameters;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.UUID;

/**
 * A filtered, keyset-paged read of jobs, newest first. The cursor (opaque to clients: base64 of
 * "submittedAt|id") names the last job of the previous page, so pages stay stable while new jobs arrive.
 */
public record JobQuery(String queue, JobState state, String user, Instant afterSubmittedAt, UUID afterId, int limit) {

    /** A page after the job an opaque cursor names (null or blank: the first page). */
    public static JobQuery page(String queue, JobState state, String user, String cursor, int limit) {
        if (cursor == null || cursor.isBlank()) {
            return new JobQuery(queue, state, user, null, null, limit);
        }
        try {
            String[] parts = new String(Base64.getUrlDecoder().decode(cursor), StandardCharsets.UTF_8).split("\\|", 2);
            return new JobQuery(queue, state, user, Instant.parse(parts[0]), UUID.fromString(parts[1]), limit);
        } catch (RuntimeException e) {
            throw InvalidRequestException.badRequest("cursor", "not a cursor this API returned");
        }
    }

    /** The cursor of the page after {@code jobs} (the page this query returned), or null when it was the last. */
    public String nextCursor(List<JobEntity> jobs) {
        if (jobs.size() < limit) {
            return null;
        }
        JobEntity last = jobs.getLast();
        return Base64.getUrlEncoder().withoutPadding()
                .encodeToString((last.submittedAt + "|" + last.id).getBytes(StandardCharsets.UTF_8));
    }

    String hql(Caller caller) {
        List<String> where = new ArrayList<>();
        if (!caller.admin()) {
            where.add("team in :teams");
        }
        if (queue != null) {
            where.add("queue = :queue");
        }
        if (state != null) {
            where.add("state = :state");
        }
        if (user != null) {
            where.add("owner = :user");
        }
        if (afterId != null) {
            where.add("(submittedAt < :afterAt or (submittedAt = :afterAt and id < :afterId))");
        }
        // Panache reads "a = :a and ..." as "from JobEntity where ..."
        String order = "order by submittedAt desc, id desc";
        return where.isEmpty() ? order : String.join(" and ", where) + " " + order;
    }

    Parameters parameters(Caller caller) {
        Parameters p = new Parameters();
        if (!caller.admin()) {
            p.and("teams", caller.teams().isEmpty() ? List.of("") : List.copyOf(caller.teams()));
        }
        if (queue != null) {
            p.and("queue", queue);
        }
        if (state != null) {
            p.and("state", state);
        }
        if (user != null) {
            p.and("user", user);
        }
        if (afterId != null) {
            p.and("afterAt", afterSubmittedAt).and("afterId", afterId);
        }
        return p;
    }
}
