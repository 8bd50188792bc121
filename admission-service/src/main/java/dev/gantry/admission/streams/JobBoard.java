package dev.gantry.admission.streams;

import dev.gantry.admission.persistence.JobEntity;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.hibernate.reactive.mutiny.Mutiny;

/**
 * The jobs someone watches, read together: every open watch looks its job up here, and one query
 * per interval reads all watched jobs for all of them, however many streams are open. Reads the
 * database, not events, so a change made through any replica is seen.
 */
@ApplicationScoped
public class JobBoard {

    /** job id -> how many open streams watch it */
    private final ConcurrentMap<UUID, Integer> watched = new ConcurrentHashMap<>();
    private final Uni<Map<UUID, JobEntity>> latest;
    private final Counter reads;

    public JobBoard(Mutiny.SessionFactory sessions, MeterRegistry registry,
            @ConfigProperty(name = "gantry.admission.watch-interval", defaultValue = "500ms") Duration interval) {
        this.reads = Counter.builder("gantry.admission.watch.reads")
                .description("reads of the watched jobs, shared by every open job watch").register(registry);
        // concurrent callers share one read in flight, and its answer for the interval
        this.latest = Uni.createFrom().deferred(() -> read(sessions)).memoize().atLeast(interval);
    }

    public void watch(UUID job) {
        watched.merge(job, 1, Integer::sum);
    }

    public void unwatch(UUID job) {
        watched.computeIfPresent(job, (id, n) -> n <= 1 ? null : n - 1);
    }

    /** The job as the latest shared read found it; null when it was not watched yet then, or is gone. */
    public Uni<JobEntity> latest(UUID job) {
        return latest.map(jobs -> jobs.get(job));
    }

    /** How many distinct jobs are watched. */
    public int watchedJobs() {
        return watched.size();
    }

    /** How many shared reads were made so far. */
    public long reads() {
        return (long) reads.count();
    }

    private Uni<Map<UUID, JobEntity>> read(Mutiny.SessionFactory sessions) {
        List<UUID> ids = List.copyOf(watched.keySet());
        if (ids.isEmpty()) {
            return Uni.createFrom().item(Map.of());
        }
        reads.increment();
        return sessions.withStatelessSession(s -> s.createSelectionQuery("from JobEntity where id in :ids", JobEntity.class)
                        .setParameter("ids", ids).getResultList())
                .map(jobs -> jobs.stream().collect(Collectors.toMap(j -> j.id, Function.identity())));
    }
}
