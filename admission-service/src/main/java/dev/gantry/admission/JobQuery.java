package dev.gantry.admission;

import dev.gantry.admission.domain.Caller;
import dev.gantry.admission.domain.JobState;
import io.quarkus.panache.common.Parameters;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/**
 * A filtered, keyset-paged read of jobs, newest first. The cursor is the (submittedAt, id) of the
 * last job of the previous page, so pages stay stable while new jobs arrive.
 */
public record JobQuery(String queue, JobState state, String user, Instant afterSubmittedAt, UUID afterId, int limit) {

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
