package dev.gantry.placement.kubernetes;

import static org.awaitility.Awaitility.await;

import dev.gantry.contracts.events.EventCodec;
import dev.gantry.contracts.events.EventEnvelope;
import dev.gantry.contracts.events.Subjects;
import dev.gantry.contracts.jobs.JobQueued;
import dev.gantry.contracts.placements.PodGangFormed;
import dev.gantry.testing.TestDatabase;
import dev.gantry.testing.TestNats;
import java.time.Duration;
import java.util.UUID;

/** Users' pod gangs in the kubernetes-mode tests: the gang placement formed, and admission's part played. */
final class UserGangs {

    private final TestDatabase db;
    private final String natsUrl;
    private final String namespace;

    UserGangs(TestDatabase db, String natsUrl, String namespace) {
        this.db = db;
        this.natsUrl = natsUrl;
        this.namespace = namespace;
    }

    /** The job id of the user gang placement formed for {@code label}, or null. */
    UUID jobId(String label) {
        String id = db.queryString("select job_id::text from cluster_gang where namespace = ? and gang_label = ? and user_pods",
                namespace, label);
        return id == null ? null : UUID.fromString(id);
    }

    /** The gang placement reported for {@code label} (placements.gang-formed), once it is in the outbox. */
    PodGangFormed formed(String label) {
        await().atMost(Duration.ofSeconds(30)).until(() -> jobId(label) != null
                && db.queryLong("select count(*) from outbox_event where subject = ? and subject_id = ?",
                        Subjects.PLACEMENTS_GANG_FORMED, jobId(label).toString()) == 1);
        String envelope = db.queryString("select envelope from outbox_event where subject = ? and subject_id = ?",
                Subjects.PLACEMENTS_GANG_FORMED, jobId(label).toString());
        return EventCodec.decode(envelope, PodGangFormed.class).payload();
    }

    /** Plays admission-service: the gang placement reported is queued, as admission queues an admitted gang. */
    UUID admit(String label) throws Exception {
        PodGangFormed gang = formed(label);
        JobQueued pods = gang.spec();
        JobQueued admitted = new JobQueued(gang.jobId(), pods.name(), pods.queue(), PodGangFormed.SUBMITTER_PREFIX + namespace, 10,
                pods.submittedAt(), pods.minAvailable(), pods.taskGroups(), pods.gpuModels(), pods.gpuTopology(), pods.network(),
                pods.requireInfiniBand(), pods.nodeSelector(), pods.tolerations(), pods.preemptible(), pods.checkpointable(),
                pods.estimatedRuntimeSeconds());
        try (TestNats nats = TestNats.connect(natsUrl)) {
            nats.publish(EventEnvelope.of(Subjects.JOBS_QUEUED, gang.jobId().toString(), admitted));
        }
        return gang.jobId();
    }
}
