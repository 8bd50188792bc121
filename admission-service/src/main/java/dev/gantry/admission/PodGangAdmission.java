package dev.gantry.admission;

import dev.gantry.admission.domain.Caller;
import dev.gantry.admission.domain.JobSpec;
import dev.gantry.admission.domain.JobState;
import dev.gantry.admission.domain.TaskGroupSpec;
import dev.gantry.admission.persistence.DissolvedPodGang;
import dev.gantry.admission.persistence.JobEntity;
import dev.gantry.admission.persistence.JobHistoryEntry;
import dev.gantry.admission.persistence.NamespaceTeam;
import dev.gantry.admission.quota.AdmissionCheck;
import dev.gantry.admission.quota.QuotaRefusedRequestException;
import dev.gantry.contracts.events.EventCodec;
import dev.gantry.contracts.events.Subjects;
import dev.gantry.contracts.jobs.JobCancelled;
import dev.gantry.contracts.jobs.JobQueued;
import dev.gantry.contracts.jobs.JobRefused;
import dev.gantry.contracts.placements.PodGangDissolved;
import dev.gantry.contracts.placements.PodGangFormed;
import dev.gantry.contracts.validation.FieldViolation;
import dev.gantry.kit.outbox.Outbox;
import io.micrometer.core.instrument.MeterRegistry;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.jboss.logging.Logger;

/**
 * Admits the gangs users form from their own Kubernetes pods as {@link JobAdmission} admits API
 * jobs: the pods' namespace is charged to the team an admin mapped it to ({@code /v1/namespaces}),
 * the submitter is {@code system:pod-gang:<namespace>}, and the spec passes the same validation and
 * the same quota check (queue membership, limits, priority governance) before it is stored with its
 * {@code jobs.queued} under the job id placement chose. A gang that fails any of them is not stored;
 * {@code jobs.refused} tells placement why. Runs inside the consumer's transaction; a quota-service
 * that does not answer fails it, and the event is redelivered.
 */
@ApplicationScoped
public class PodGangAdmission {

    private static final Logger LOG = Logger.getLogger(PodGangAdmission.class);
    static final String SUBMITTER_PREFIX = PodGangFormed.SUBMITTER_PREFIX;

    private final Outbox outbox;
    private final AdmissionCheck admissionCheck;
    private final MeterRegistry registry;

    public PodGangAdmission(Outbox outbox, AdmissionCheck admissionCheck, MeterRegistry registry) {
        this.outbox = outbox;
        this.admissionCheck = admissionCheck;
        this.registry = registry;
    }

    /** {@code placements.gang-formed}: admitted (QUEUED, {@code jobs.queued}) or refused ({@code jobs.refused}). */
    public Uni<Void> formed(PodGangFormed gang) {
        if (gang.jobId() == null || gang.namespace() == null || gang.gang() == null || gang.spec() == null
                || gang.spec().taskGroups() == null || gang.spec().taskGroups().isEmpty()) {
            LOG.errorf("dropping placements.gang-formed without job id, namespace, gang or tasks: %s", gang.jobId());
            return Uni.createFrom().voidItem();
        }
        return JobEntity.<JobEntity>findById(gang.jobId())
                .chain(existing -> existing != null ? Uni.createFrom().item(true) // delivered again: admitted once
                        : DissolvedPodGang.<DissolvedPodGang>findById(gang.jobId()).map(d -> d != null))
                .chain(seen -> seen ? Uni.createFrom().voidItem()
                        : NamespaceTeam.<NamespaceTeam>findById(gang.namespace()).chain(mapping -> mapping == null
                                ? refuse(gang, "namespace " + gang.namespace() + " is mapped to no Gantry team (an admin maps it:"
                                        + " PUT /v1/namespaces/" + gang.namespace() + ")")
                                : check(gang, mapping.team)));
    }

    private Uni<Void> check(PodGangFormed gang, String team) {
        JobSpec spec = specOf(gang.spec(), team);
        Caller submitter = new Caller(SUBMITTER_PREFIX + gang.namespace(), Set.of(team), false);
        List<FieldViolation> violations = new java.util.ArrayList<>(spec.quantityViolations());
        violations.addAll(spec.violations());
        if (!violations.isEmpty()) {
            return refuse(gang, violations.stream().map(v -> v.field() + ": " + v.message()).collect(Collectors.joining("; ")));
        }
        // quota's own 4xx (a request it cannot judge) is a refusal too; quota not answering fails the event (redelivered)
        return admissionCheck.check(spec, submitter, gang.jobId())
                .map(verdict -> verdict.allowed()
                        ? Verdict.admitted(verdict.priority() != null ? verdict.priority() : spec.priority())
                        : Verdict.refused(verdict.reason() + ": " + verdict.message()))
                .onFailure(QuotaRefusedRequestException.class).recoverWithItem(e -> Verdict.refused(e.getMessage()))
                .chain(v -> v.refusal() != null ? refuse(gang, v.refusal()) : store(gang, spec, v.priority(), submitter));
    }

    /** Quota's answer: admitted with a priority, or refused with why. */
    private record Verdict(int priority, String refusal) {

        static Verdict admitted(int priority) {
            return new Verdict(priority, null);
        }

        static Verdict refused(String why) {
            return new Verdict(0, why);
        }
    }

    private Uni<Void> store(PodGangFormed gang, JobSpec spec, int priority, Caller submitter) {
        Instant now = Instant.now();
        JobEntity job = new JobEntity();
        job.id = gang.jobId();
        job.name = spec.name();
        job.queue = spec.queue();
        job.team = spec.team();
        job.owner = submitter.user();
        job.priority = priority;
        job.totalGpus = spec.totalGpus();
        job.state = JobState.QUEUED;
        job.spec = EventCodec.toJson(spec);
        job.submittedAt = gang.spec().submittedAt() != null ? gang.spec().submittedAt() : now;
        job.updatedAt = now;
        count("accepted");
        LOG.infof("pod gang %s/%s admitted as job %s (team %s, queue %s)", gang.namespace(), gang.gang(), job.id, job.team, job.queue);
        return job.<JobEntity>persist()
                .call(() -> JobHistoryEntry.record(job.id, JobState.QUEUED, null,
                        "admitted from pods labelled gantry.dev/job=" + gang.gang() + " in namespace " + gang.namespace()))
                .call(() -> outbox.append(Subjects.JOBS_QUEUED, job.id.toString(), JobAdmission.queuedEvent(job, spec)))
                .replaceWithVoid();
    }

    private Uni<Void> refuse(PodGangFormed gang, String reason) {
        count("rejected");
        LOG.infof("pod gang %s/%s refused: %s", gang.namespace(), gang.gang(), reason);
        return outbox.append(Subjects.JOBS_REFUSED, gang.jobId().toString(),
                new JobRefused(gang.jobId(), gang.namespace(), gang.gang(), reason, Instant.now())).replaceWithVoid();
    }

    /** {@code placements.gang-dissolved}: a queued gang is withdrawn; one not admitted yet never will be. */
    public Uni<Void> dissolved(PodGangDissolved gang) {
        if (gang.jobId() == null) {
            LOG.error("dropping placements.gang-dissolved without job id");
            return Uni.createFrom().voidItem();
        }
        return JobEntity.<JobEntity>findById(gang.jobId()).chain(job -> {
            if (job == null) {
                DissolvedPodGang tombstone = new DissolvedPodGang();
                tombstone.jobId = gang.jobId();
                tombstone.dissolvedAt = Instant.now();
                return tombstone.persist().replaceWithVoid();
            }
            if (job.state != JobState.QUEUED) {
                return Uni.createFrom().voidItem(); // placed meanwhile: placement follows its pods from here
            }
            job.state = JobState.CANCELLED;
            job.pendingReason = null;
            job.updatedAt = Instant.now();
            String why = "withdrawn: " + (gang.reason() == null ? "its pods are gone" : gang.reason());
            return JobHistoryEntry.record(job.id, JobState.CANCELLED, why, Subjects.PLACEMENTS_GANG_DISSOLVED)
                    .chain(() -> outbox.append(Subjects.JOBS_CANCELLED, job.id.toString(),
                            new JobCancelled(job.id, job.queue, job.owner, job.updatedAt)))
                    .replaceWithVoid();
        });
    }

    /** The admission spec the pods ask for, charged to {@code team}; priority 0: the queue's default. */
    static JobSpec specOf(JobQueued pods, String team) {
        List<TaskGroupSpec> groups = pods.taskGroups().stream()
                .map(g -> new TaskGroupSpec(g.name(), g.replicas(), g.gpusPerReplica(), g.gpuMilli(), g.cpuMillis(), g.memoryMiB(),
                        null, null, null, null, g.migProfile()))
                .toList();
        return new JobSpec(pods.name(), pods.queue(), team, null, pods.priority(), pods.minAvailable(), groups,
                pods.gpuModels() == null ? List.of() : pods.gpuModels(), pods.gpuTopology() == null ? "any" : pods.gpuTopology(),
                pods.network(), pods.requireInfiniBand(), pods.nodeSelector() == null ? Map.of() : pods.nodeSelector(),
                pods.tolerations() == null ? List.of() : pods.tolerations(), pods.preemptible(), pods.checkpointable(), null,
                pods.estimatedRuntimeSeconds(), Map.of(), pods.migratable());
    }

    private void count(String outcome) {
        registry.counter("gantry.admission.pod.gangs", "outcome", outcome).increment();
    }
}
