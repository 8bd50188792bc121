package dev.gantry.admission;

import dev.gantry.admission.domain.JobState;
import dev.gantry.admission.persistence.JobEntity;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.hibernate.reactive.panache.Panache;
import io.quarkus.scheduler.Scheduled;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

/** {@code gantry_admission_jobs{state}}: how many jobs are in each state, refreshed from the database. */
@ApplicationScoped
public class JobStateGauges {

    private final Map<JobState, AtomicLong> counts = new EnumMap<>(JobState.class);

    public JobStateGauges(MeterRegistry registry) {
        for (JobState state : JobState.values()) {
            AtomicLong count = new AtomicLong();
            counts.put(state, count);
            registry.gauge("gantry.admission.jobs", List.of(io.micrometer.core.instrument.Tag.of("state", state.name())), count);
        }
    }

    @Scheduled(every = "${gantry.admission.state-gauges.interval:15s}", concurrentExecution = Scheduled.ConcurrentExecution.SKIP,
            skipExecutionIf = Scheduled.ApplicationNotRunning.class)
    Uni<Void> refresh() {
        return Panache.withSession(() -> JobEntity.getSession().chain(session -> session
                        .createSelectionQuery("select state, count(*) from JobEntity group by state", Object[].class)
                        .getResultList()))
                .invoke(rows -> {
                    counts.values().forEach(c -> c.set(0));
                    for (Object[] row : rows) {
                        counts.get((JobState) row[0]).set((Long) row[1]);
                    }
                })
                .replaceWithVoid();
    }
}
