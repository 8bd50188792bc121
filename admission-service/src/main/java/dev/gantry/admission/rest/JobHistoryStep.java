package dev.gantry.admission.rest;

import dev.gantry.admission.persistence.JobHistoryEntry;
import java.time.Instant;

/** One step of a job's history as the API shows it. */
public record JobHistoryStep(Instant at, String state, String reason, String source) {

    static JobHistoryStep of(JobHistoryEntry entry) {
        return new JobHistoryStep(entry.at, entry.state.name(), entry.reason, entry.source);
    }
}
