package dev.gantry.placement.kubernetes;

import dev.gantry.contracts.events.EventCodec;
import dev.gantry.contracts.events.Subjects;
import dev.gantry.contracts.jobs.JobQueued;
import dev.gantry.contracts.placements.PodGangDissolved;
import dev.gantry.contracts.placements.PodGangFormed;
import dev.gantry.kit.outbox.Outbox;
import dev.gantry.placement.cluster.BinderMode;
import dev.gantry.placement.cluster.Leadership;
import dev.gantry.placement.persistence.Allocation;
import dev.gantry.placement.persistence.ClusterGang;
import dev.gantry.placement.persistence.EndedJob;
import dev.gantry.placement.persistence.PendingJob;
import dev.gantry.placement.persistence.RunningJobRecord;
import dev.gantry.placement.window.Binder;
import dev.gantry.placement.window.StandaloneExecutor;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.quarkus.hibernate.reactive.panache.Panache;
import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.runtime.StartupEvent;
import io.quarkus.scheduler.Scheduled;
import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.enterprise.inject.Instance;
import jakarta.inject.Inject;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.jboss.logging.Logger;

/**
 * Kubernetes mode's eyes: an informer on the pods labelled {@code gantry.dev/job} in gantry's
 * namespace. A change marks its gang; every reconcile interval the leader looks at the marked
 * gangs, in the database's terms:
 * <ul>
 * <li>a running job whose pods all {@code Succeeded} completes (released, {@code placements.completed});
 * one whose pod {@code Failed} fails (released, {@code placements.failed}, not requeued: the same
 * pods would fail again; admission shows it FAILED). A victim in its grace period is left to the
 * binder;</li>
 * <li>users' pods ({@code schedulerName: gantry}, {@code gantry.dev/job}, {@code gantry.dev/min-available})
 * form a gang once at least min-available of them wait; admission admits it as it admits API jobs
 * (namespace mapped to a team, quota: {@code placements.gang-formed}, then {@code jobs.queued} or
 * {@code jobs.refused}) and the binder binds the admitted gang's pods like its own; until placed,
 * the gang follows its pods (a pod replaced by its owner is picked up, a gang that shrinks below
 * min-available is withdrawn: {@code placements.gang-dissolved});</li>
 * <li>a pod of a launched job that is gone, and that gantry did not delete itself (the actuator
 * remembers its own deletions for a while), was deleted by someone else: the job loses its
 * placement ({@link Binder#podLost}).</li>
 * </ul>
 * On start, on gaining leadership, every resync interval and on {@link #sweepSoon()}, the leader
 * also sweeps: placements recorded but never launched are launched again ({@link Binder#relaunch()}),
 * and every running gang is looked at (pods deleted while no replica watched are noticed then).
 * With DRA, after a sweep and whenever pods changed, the claims Gantry made whose gang is no longer
 * placed or whose pod finished are released ({@link DeviceClaims#sweep}).
 */
@ApplicationScoped
public class PodWatcher {

    private static final Logger LOG = Logger.getLogger(PodWatcher.class);

    private final boolean kubernetes;
    private final Instance<KubernetesClient> client;
    private final Leadership leadership;
    private final StandaloneExecutor executor;
    private final String namespace;
    private final Duration resync;
    /**
     * A pod missing this long after its gang was launched is gone (before that the informer may not
     * have seen it made yet); a pod the informer saw deleted counts at once.
     */
    static final Duration SETTLE = Duration.ofSeconds(5);

    private final Set<String> dirty = ConcurrentHashMap.newKeySet();
    /** Pods the informer saw deleted: pod name -> when. */
    private final Map<String, Instant> seenDeleted = new ConcurrentHashMap<>();
    private final Instance<KubernetesActuator> actuator;
    private final Binder binder;
    private final Outbox outbox;
    /** How long a refused gang whose pods stay the same waits before admission is asked again. */
    private final Duration refusalRetry;
    @Inject
    PodSigningKey signingKey;
    @Inject
    DeviceClaims claims;
    @Inject
    io.vertx.mutiny.core.Vertx vertx;
    private volatile boolean claimsToSweep;
    private volatile SharedIndexInformer<Pod> informer;
    private volatile boolean sweepRequested;
    private boolean wasLeading;
    private Instant lastSweep = Instant.MIN;

    public PodWatcher(BinderMode mode, Instance<KubernetesClient> client, Leadership leadership, StandaloneExecutor executor,
            Instance<KubernetesActuator> actuator, Binder binder, Outbox outbox,
            @ConfigProperty(name = "gantry.placement.kubernetes.namespace", defaultValue = "gantry") String namespace,
            @ConfigProperty(name = "gantry.placement.kubernetes.resync", defaultValue = "30s") Duration resync,
            @ConfigProperty(name = "gantry.placement.kubernetes.refusal-retry", defaultValue = "60s") Duration refusalRetry) {
        this.outbox = outbox;
        this.refusalRetry = refusalRetry;
        this.kubernetes = mode.kubernetes();
        this.client = client;
        this.leadership = leadership;
        this.executor = executor;
        this.actuator = actuator;
        this.binder = binder;
        this.namespace = namespace;
        this.resync = resync;
    }

    void start(@Observes StartupEvent event) {
        if (!kubernetes) {
            return;
        }
        informer = client.get().pods().inNamespace(namespace).withLabel(KubernetesActuator.LABEL_JOB)
                .inform(new ResourceEventHandler<>() {
                    @Override
                    public void onAdd(Pod pod) {
                        mark(pod);
                    }

                    @Override
                    public void onUpdate(Pod before, Pod pod) {
                        mark(pod);
                    }

                    @Override
                    public void onDelete(Pod pod, boolean unknownFinalState) {
                        Instant now = Instant.now();
                        seenDeleted.values().removeIf(at -> at.plus(KubernetesActuator.DELETION_MEMORY).isBefore(now));
                        seenDeleted.put(pod.getMetadata().getName(), now);
                        mark(pod);
                    }
                }, resync.toMillis());
        LOG.infof("watching pods labelled %s in namespace %s", KubernetesActuator.LABEL_JOB, namespace);
    }

    void stop(@Observes ShutdownEvent event) {
        if (informer != null) {
            informer.close();
        }
    }

    private void mark(Pod pod) {
        String label = pod.getMetadata().getLabels() == null ? null : pod.getMetadata().getLabels().get(KubernetesActuator.LABEL_JOB);
        if (label != null) {
            dirty.add(label);
        }
    }

    @Scheduled(every = "${gantry.placement.kubernetes.reconcile-interval:1s}", concurrentExecution = Scheduled.ConcurrentExecution.SKIP,
            skipExecutionIf = Scheduled.ApplicationNotRunning.class)
    Uni<Void> reconcile() {
        if (informer == null || !informer.hasSynced()) {
            return Uni.createFrom().voidItem(); // a pod missing from a store still filling is not gone
        }
        boolean leading = leadership.leading();
        boolean gained = leading && !wasLeading;
        wasLeading = leading;
        if (!leading) {
            return Uni.createFrom().voidItem();
        }
        Instant now = Instant.now();
        boolean sweep = gained || sweepRequested || !lastSweep.plus(resync).isAfter(now);
        return (sweep ? sweep(now) : Uni.createFrom().voidItem()).chain(this::reconcileMarked).chain(this::sweepClaims);
    }

    /**
     * Claims whose use is over are released. The claims are taken from the informer before the placed gangs
     * are read, so a claim a launch makes meanwhile (its placement recorded first) is never taken for a leftover.
     */
    private Uni<Void> sweepClaims() {
        if (!claims.enabled() || !claimsToSweep) {
            return Uni.createFrom().voidItem();
        }
        claimsToSweep = false;
        List<io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim> managed = claims.managed(namespace);
        if (managed.isEmpty()) {
            return Uni.createFrom().voidItem();
        }
        Map<String, Pod> pods = new LinkedHashMap<>();
        informer.getStore().list().forEach(p -> pods.put(p.getMetadata().getName(), p));
        return Panache.withSession(() -> ClusterGang.<ClusterGang>list("jobId in (select r.jobId from RunningJobRecord r)"))
                .map(rows -> rows.stream().map(r -> r.gangLabel + "/" + r.attempt).collect(Collectors.toSet()))
                .chain(placed -> vertx.executeBlocking(Uni.createFrom().item(() -> claims.sweep(managed, placed, pods))))
                .replaceWithVoid()
                .onFailure().recoverWithUni(e -> {
                    claimsToSweep = true;
                    LOG.warnf("claims sweep failed (retried): %s", e.toString());
                    return Uni.createFrom().voidItem();
                });
    }

    /** For tests: the next reconcile sweeps (relaunches, looks at every running gang) without waiting for the resync. */
    void sweepSoon() {
        sweepRequested = true;
    }

    /** Relaunches placements recorded but not launched, then marks every gang (pods gone while nobody watched are found). */
    private Uni<Void> sweep(Instant now) {
        sweepRequested = false;
        claimsToSweep = true;
        lastSweep = now;
        return binder.relaunch()
                .invoke(n -> {
                    if (n > 0) {
                        LOG.infof("relaunched %d placements recorded before a restart", n);
                    }
                })
                .chain(() -> Panache.withSession(() -> ClusterGang.<ClusterGang>list("launchedAt is not null and jobId in "
                        + "(select r.jobId from RunningJobRecord r)")))
                .invoke(gangs -> gangs.forEach(g -> dirty.add(g.gangLabel)))
                .invoke(this::markAll)
                .replaceWithVoid()
                .onFailure().recoverWithUni(e -> {
                    LOG.warnf("sweep failed (retried next resync): %s", e.toString());
                    return Uni.createFrom().voidItem();
                });
    }

    private Uni<Void> reconcileMarked() {
        if (dirty.isEmpty()) {
            return Uni.createFrom().voidItem();
        }
        List<String> labels = new ArrayList<>(dirty);
        dirty.removeAll(labels);
        claimsToSweep = true; // pods changed: one may have finished, or its job ended
        return Multi.createFrom().iterable(labels)
                .onItem().transformToUniAndConcatenate(label -> Panache.withTransaction(() -> reconcile(label))
                        .onFailure().recoverWithUni(e -> {
                            LOG.warnf("gang %s: reconcile failed, retried: %s", label, e.toString());
                            dirty.add(label);
                            return Uni.createFrom().voidItem();
                        }))
                .collect().last().replaceWithVoid();
    }

    /**
     * A label's pods: those Gantry made (signed, {@link PodProvenance}) belong to the API job whose id
     * is the label; any others are a user's gang, whose job id was chosen when it formed and is found
     * by namespace and label, never read from a label. So a user's pod labelled with another job's id
     * and attempt neither joins nor ends that job.
     */
    private Uni<Void> reconcile(String label) {
        List<Pod> pods = informer.getStore().list().stream()
                .filter(p -> label.equals(p.getMetadata().getLabels().get(KubernetesActuator.LABEL_JOB))).toList();
        PodProvenance provenance = signingKey.provenance();
        List<Pod> gantryMade = pods.stream().filter(provenance::madeByGantry).toList();
        List<Pod> users = pods.stream().filter(p -> !provenance.madeByGantry(p)).toList();
        Uni<Void> userGang = ClusterGang.<ClusterGang>find("namespace = ?1 and gangLabel = ?2 and userPods = true", namespace, label)
                .firstResult().chain(row -> row == null ? form(label, users) : userGang(row, users));
        UUID apiJob = PodGangs.apiJobIdOf(label);
        return apiJob == null ? userGang : userGang.chain(() -> RunningJobRecord.<RunningJobRecord>findById(apiJob)
                .chain(running -> running == null ? Uni.createFrom().voidItem() : phases(running, gantryMade)));
    }

    /** A user's gang already formed: running (its phases end it), or waiting for admission or a window. */
    private Uni<Void> userGang(ClusterGang row, List<Pod> pods) {
        return RunningJobRecord.<RunningJobRecord>findById(row.jobId).chain(running -> running != null ? phases(running, pods)
                : PendingJob.<PendingJob>findById(row.jobId).chain(pending -> waiting(row, pods, pending)));
    }

    /**
     * At least min-available of a label's pods wait and no gang of theirs exists: a gang forms under a
     * fresh job id, and admission is asked to admit it ({@code placements.gang-formed}, in the same
     * transaction as the row). It is planned only once admission queues it ({@code jobs.queued}).
     */
    private Uni<Void> form(String label, List<Pod> pods) {
        List<Pod> waiting = pods.stream().filter(PodGangs::waitingUserPod).toList();
        int min = PodGangs.minAvailable(waiting);
        if (min == 0 || waiting.size() < min) {
            return Uni.createFrom().voidItem();
        }
        Map<Pod, UserClaims.Ask> asks = asks(label, waiting);
        if (asks == null) {
            return Uni.createFrom().voidItem();
        }
        UUID jobId = UUID.randomUUID();
        PodGangs.UserGang g = PodGangs.gang(jobId, label, waiting, null, asks::get);
        ClusterGang row = new ClusterGang();
        row.jobId = jobId;
        row.namespace = namespace;
        row.gangLabel = label;
        row.userPods = true;
        row.pods = EventCodec.toJson(new LinkedHashMap<>(g.podByTask()));
        row.createdAt = Instant.now();
        LOG.infof("gang %s/%s formed: %d pods (min %d), %d GPUs; admission asked to admit it as job %s", namespace, label,
                waiting.size(), min, g.spec().totalGpus(), jobId);
        return row.persist().chain(() -> outbox.append(Subjects.PLACEMENTS_GANG_FORMED, jobId.toString(),
                new PodGangFormed(jobId, namespace, label, g.spec(), row.createdAt))).replaceWithVoid();
    }

    /**
     * A formed gang not placed: it follows its pods (a pod its owner replaced is picked up); one that
     * falls below min-available is withdrawn ({@code placements.gang-dissolved}); a refused one is
     * asked about again when its pods change or the refusal is {@link #refusalRetry} old.
     */
    private Uni<Void> waiting(ClusterGang row, List<Pod> pods, PendingJob pending) {
        List<Pod> waiting = pods.stream().filter(PodGangs::waitingUserPod).toList();
        int min = PodGangs.minAvailable(waiting);
        boolean formed = min > 0 && waiting.size() >= min;
        @SuppressWarnings("unchecked")
        Map<String, String> podByTask = EventCodec.fromJson(row.pods, LinkedHashMap.class);
        Set<String> names = waiting.stream().map(p -> p.getMetadata().getName()).collect(Collectors.toSet());
        boolean podsChanged = !names.equals(Set.copyOf(podByTask.values()));
        if (row.refusedAt != null) {
            if (!formed || podsChanged || row.refusedAt.plus(refusalRetry).isBefore(Instant.now())) {
                dirty.add(row.gangLabel); // formed anew (or not) on the next reconcile
                return row.delete();
            }
            return Uni.createFrom().voidItem();
        }
        return EndedJob.ended(row.jobId).chain(ended -> {
            if (ended) { // cancelled (by its team, or withdrawn): its pods wait until their owner removes them
                return formed ? Uni.createFrom().voidItem() : row.delete();
            }
            if (!formed) {
                LOG.infof("gang %s/%s: %d of %d pods waiting, withdrawn", namespace, row.gangLabel, waiting.size(), min);
                return (pending == null ? Uni.createFrom().item(false) : pending.delete().replaceWith(true))
                        .chain(() -> row.delete())
                        .chain(() -> outbox.append(Subjects.PLACEMENTS_GANG_DISSOLVED, row.jobId.toString(),
                                new PodGangDissolved(row.jobId, namespace, row.gangLabel,
                                        waiting.size() + " of " + Math.max(min, 1) + " pods waiting", Instant.now())))
                        .replaceWithVoid();
            }
            Map<Pod, UserClaims.Ask> asks = podsChanged ? asks(row.gangLabel, waiting) : null;
            if (asks != null) {
                row.pods = EventCodec.toJson(new LinkedHashMap<>(PodGangs.gang(row.jobId, row.gangLabel, waiting, null, asks::get).podByTask()));
                return row.persist().replaceWithVoid();
            }
            return Uni.createFrom().voidItem();
        });
    }

    /**
     * What each pod's own ResourceClaims ask for (DRA); null while a claim is not known yet (a template's claim the
     * resourceclaim controller has not made, or the informer has not seen): the gang is looked at again next time.
     */
    private Map<Pod, UserClaims.Ask> asks(String label, List<Pod> pods) {
        Map<Pod, UserClaims.Ask> asks = new java.util.IdentityHashMap<>();
        for (Pod p : pods) {
            UserClaims.Ask ask = claims.ask(p);
            if (ask == null) {
                LOG.debugf("gang %s/%s: a claim of pod %s is not made yet", namespace, label, p.getMetadata().getName());
                dirty.add(label);
                return null;
            }
            asks.put(p, ask);
        }
        return asks;
    }

    /** A running job's pods: one gone, or their phases, end it. */
    private Uni<Void> phases(RunningJobRecord running, List<Pod> all) {
        if (running.evictingUntil != null) {
            return Uni.createFrom().voidItem(); // a victim: the binder ends it when its grace is over
        }
        UUID jobId = running.jobId;
        return ClusterGang.<ClusterGang>findById(jobId).chain(gang -> lostPod(running, gang, all).chain(lost -> lost != null
                ? binder.podLost(jobId, "pod " + lost + " was deleted outside Gantry").replaceWithVoid()
                : ended(running, gang, all)));
    }

    /** A pod of the launched attempt that is gone and that gantry did not delete, or null. */
    private Uni<String> lostPod(RunningJobRecord running, ClusterGang gang, List<Pod> all) {
        if (gang == null || gang.launchedAt == null) {
            return Uni.createFrom().nullItem(); // not launched yet: its pods may still be on their way
        }
        boolean settled = gang.launchedAt.plus(SETTLE).isBefore(Instant.now());
        Set<String> present = all.stream().map(p -> p.getMetadata().getName()).collect(Collectors.toSet());
        Uni<List<String>> expected;
        if (gang.userPods) {
            @SuppressWarnings("unchecked")
            Map<String, String> byTask = EventCodec.fromJson(gang.pods, LinkedHashMap.class);
            expected = Uni.createFrom().item(List.copyOf(byTask.values()));
        } else {
            String name = EventCodec.fromJson(running.spec, JobQueued.class).name();
            expected = Allocation.<Allocation>list("jobId", running.jobId).map(rows -> rows.stream()
                    .map(a -> KubernetesActuator.podName(running.jobId, name, a.task, gang.attempt)).toList());
        }
        return expected.map(names -> names.stream()
                .filter(n -> !present.contains(n))
                .filter(n -> settled || seenDeleted.containsKey(n))
                .filter(n -> !actuator.get().deletedByGantry(gang.namespace, n))
                .findFirst().orElse(null));
    }

    /** A running job's end, as its pods' phases report it. */
    private Uni<Void> ended(RunningJobRecord running, ClusterGang gang, List<Pod> all) {
        UUID jobId = running.jobId;
        List<Pod> pods = all.stream().filter(p -> p.getMetadata().getDeletionTimestamp() == null)
                .filter(p -> gang == null || gang.userPods
                        || String.valueOf(gang.attempt).equals(p.getMetadata().getLabels().get(KubernetesActuator.LABEL_ATTEMPT)))
                .toList();
        Pod failed = pods.stream().filter(p -> "Failed".equals(phase(p))).findFirst().orElse(null);
        if (failed != null) {
            String why = failed.getStatus().getReason() != null ? failed.getStatus().getReason() : "Failed";
            return executor.release(jobId, Subjects.PLACEMENTS_FAILED, "pod " + failed.getMetadata().getName() + " failed: " + why)
                    .replaceWithVoid();
        }
        long succeeded = pods.stream().filter(p -> "Succeeded".equals(phase(p))).count();
        if (succeeded == 0 || succeeded < pods.size()) {
            return Uni.createFrom().voidItem();
        }
        return Allocation.count("jobId", jobId).chain(tasks -> succeeded >= tasks
                ? executor.release(jobId, "completed").replaceWithVoid()
                : Uni.createFrom().voidItem());
    }

    private static String phase(Pod p) {
        return p.getStatus() == null ? null : p.getStatus().getPhase();
    }

    /** For tests: gangs are looked at again on the next reconcile. */
    void markAll() {
        if (informer != null) {
            informer.getStore().list().forEach(this::mark);
        }
    }

    /** Pods the informer holds (for tests and diagnostics). */
    public Map<String, String> podPhases() {
        Map<String, String> phases = new LinkedHashMap<>();
        if (informer != null) {
            informer.getStore().list().forEach(p -> phases.put(p.getMetadata().getName(), phase(p)));
        }
        return phases;
    }
}
