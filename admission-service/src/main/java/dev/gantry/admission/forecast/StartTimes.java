package dev.gantry.admission.forecast;

import dev.gantry.admission.console.PlacementClient;
import dev.gantry.admission.domain.Caller;
import dev.gantry.admission.domain.JobState;
import dev.gantry.admission.persistence.JobEntity;
import io.quarkus.hibernate.reactive.panache.Panache;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import org.eclipse.microprofile.rest.client.inject.RestClient;
import org.jboss.logging.Logger;

/**
 * When waiting jobs are expected to start, asked of placement when jobs are read (as inventory
 * asks it which nodes are quarantined): the forecast is placement's judgment of its last window,
 * recomputed every window by its leading replica and stored in its database, so any replica
 * answers, asking at read time shows the freshest one, and placement says when it is stale. Only jobs that wait (QUEUED,
 * PREEMPTED) have one; when placement does not answer in time they show it as unknown, with why.
 * Placement names the jobs a job waits for whoever owns them; a caller sees only those of teams
 * it may see, the others only as a count ("and 2 jobs you cannot see"), as the job views hide them.
 */
@ApplicationScoped
public class StartTimes {

    private static final Logger LOG = Logger.getLogger(StartTimes.class);
    private static final Duration WAIT = Duration.ofMillis(1000);

    /** A waiting job's expected start: {@code at} null when unknown; {@code waitsFor}: jobs that must end first. */
    public record Forecast(Instant at, String basis, List<UUID> waitsFor, String note) {
        static Forecast unknown(String why) {
            return new Forecast(null, "unknown", List.of(), "unknown: " + why);
        }
    }

    private final PlacementClient placement;

    public StartTimes(@RestClient PlacementClient placement) {
        this.placement = placement;
    }

    public static boolean waits(JobEntity job) {
        return job.state == JobState.QUEUED || job.state == JobState.PREEMPTED;
    }

    /**
     * The forecast of each waiting job of {@code jobs}, by id, as {@code caller} may see it: the
     * jobs it waits for of teams the caller cannot see are left out and counted in the note.
     */
    public Uni<Map<UUID, Forecast>> of(List<JobEntity> jobs, Caller caller) {
        return of(jobs).chain(forecasts -> {
            Set<UUID> named = new HashSet<>();
            forecasts.values().forEach(f -> named.addAll(f.waitsFor()));
            if (named.isEmpty() || caller.admin()) {
                return Uni.createFrom().item(forecasts);
            }
            return Panache.withSession(() -> JobEntity.<JobEntity>list("id in ?1", List.copyOf(named))).map(found -> {
                Set<UUID> visible = new HashSet<>();
                found.stream().filter(j -> caller.canSee(j.team)).forEach(j -> visible.add(j.id));
                Map<UUID, Forecast> out = new HashMap<>();
                forecasts.forEach((id, f) -> out.put(id, redacted(f, visible)));
                return out;
            });
        });
    }

    private static Forecast redacted(Forecast f, Set<UUID> visible) {
        List<UUID> shown = new ArrayList<>();
        f.waitsFor().stream().filter(visible::contains).forEach(shown::add);
        int hidden = f.waitsFor().size() - shown.size();
        if (hidden == 0) {
            return f;
        }
        String more = " (and " + hidden + (hidden == 1 ? " job" : " jobs") + " you cannot see)";
        return new Forecast(f.at(), f.basis(), List.copyOf(shown), f.note() == null ? more.trim() : f.note() + more);
    }

    /** The forecast of each waiting job of {@code jobs}, by id, naming every job it waits for (for the caller's own checks). */
    Uni<Map<UUID, Forecast>> of(List<JobEntity> jobs) {
        List<String> waiting = jobs.stream().filter(StartTimes::waits).map(j -> j.id.toString()).toList();
        if (waiting.isEmpty()) {
            return Uni.createFrom().item(Map.of());
        }
        // a long page asks for all (one URL holds some dozens of ids); placement bounds the list by its max-jobs
        return placement.startForecasts(waiting.size() <= 40 ? waiting : List.of())
                .ifNoItem().after(WAIT).fail()
                .map(page -> {
                    Map<UUID, PlacementClient.StartForecast> byJob = new HashMap<>();
                    page.items().forEach(f -> byJob.put(f.jobId(), f));
                    Map<UUID, Forecast> out = new HashMap<>();
                    for (String id : waiting) {
                        UUID job = UUID.fromString(id);
                        PlacementClient.StartForecast f = byJob.get(job);
                        out.put(job, f != null ? new Forecast(f.startAt(), f.basis(), f.waitsFor() == null ? List.of() : f.waitsFor(), f.note())
                                : page.computedAt() == null ? Forecast.unknown("placement has not forecast yet")
                                : Boolean.TRUE.equals(page.stale()) && page.staleReason() != null ? Forecast.unknown(page.staleReason())
                                : Forecast.unknown("not forecast (more than " + page.maxJobs() + " jobs ahead of it in line, or it arrived after the last window)"));
                    }
                    return out;
                })
                .onFailure().recoverWithItem(e -> {
                    LOG.debugf("placement-service did not say when jobs start: %s", e.toString());
                    Map<UUID, Forecast> out = new HashMap<>();
                    waiting.forEach(id -> out.put(UUID.fromString(id), Forecast.unknown("placement-service did not answer")));
                    return out;
                });
    }

    /** One job's forecast as {@code caller} may see it (null when it does not wait). */
    public Uni<Forecast> of(JobEntity job, Caller caller) {
        return of(List.of(job), caller).map(m -> m.get(job.id));
    }
}
