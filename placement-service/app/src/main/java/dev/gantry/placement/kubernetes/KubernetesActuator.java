package dev.gantry.placement.kubernetes;

import dev.gantry.contracts.jobs.JobQueued;
import dev.gantry.contracts.resources.MigProfile;
import dev.gantry.placement.cluster.ClusterActionException;
import dev.gantry.placement.cluster.ClusterActuator;
import io.fabric8.kubernetes.api.model.Binding;
import io.fabric8.kubernetes.api.model.BindingBuilder;
import io.fabric8.kubernetes.api.model.ContainerBuilder;
import io.fabric8.kubernetes.api.model.DeleteOptionsBuilder;
import io.fabric8.kubernetes.api.model.EventBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.policy.v1.Eviction;
import io.fabric8.kubernetes.api.model.policy.v1.EvictionBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Typed;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.jboss.logging.Logger;

/**
 * The kubernetes binder's hands. A job submitted through the API gets one pod per task (the task
 * group's image and command, {@code schedulerName: gantry}, its GPUs as {@code nvidia.com/gpu}
 * limits and their indices in {@code gantry.dev/gpu-indices}, or its MIG devices as the device plugin's
 * {@code nvidia.com/mig-<profile>} limits and their ids in {@code gantry.dev/mig-devices}); users' pods exist already. Each
 * pod is bound to its node with a {@code Binding} (which also carries the GPU indices annotation
 * onto the pod). All or none: when one step fails after retries, the pods this call created (or
 * users' pods it bound) are deleted again.
 *
 * <p>With Dynamic Resource Allocation on ({@link DeviceClaims#enabled()}) a pod of an API job asks for
 * its GPUs through a ResourceClaim instead of {@code nvidia.com/gpu} limits, and each task goes
 * pod (made, not bound) → claim (made, allocated to exactly the chosen devices, reserved for the pod)
 * → Binding; a user's gang's pods that reference claims of their own have those claims allocated
 * ({@link DeviceClaims#allocateUserClaims}) before any pod of the gang is bound. The placement was
 * recorded before any of it, so a crash anywhere in between leaves a placement the sweep launches
 * again: the pod and the claim are found and reused, or, if that launch fails, deleted with the claims
 * released, as on any rollback. Transient API errors (connection, 429, 5xx) are
 * retried with exponential backoff. Every call here blocks.
 */
@ApplicationScoped
@Typed(KubernetesActuator.class) // injected as ClusterActuator only through BinderMode's choice
public class KubernetesActuator implements ClusterActuator {

    private static final Logger LOG = Logger.getLogger(KubernetesActuator.class);

    public static final String SCHEDULER_NAME = "gantry";
    public static final String LABEL_JOB = "gantry.dev/job";
    public static final String LABEL_QUEUE = "gantry.dev/queue";
    public static final String LABEL_TASK = "gantry.dev/task";
    /** Which placement of the job a pod gantry created belongs to (see {@link Gang#attempt()}). */
    public static final String LABEL_ATTEMPT = "gantry.dev/attempt";
    public static final String LABEL_MIN_AVAILABLE = "gantry.dev/min-available";
    /** Marks pods gantry created, so they are never mistaken for a user's gang. */
    public static final String LABEL_MANAGED_BY = "app.kubernetes.io/managed-by";
    public static final String ANNOTATION_GPU_INDICES = "gantry.dev/gpu-indices";
    public static final String ANNOTATION_GPU_MILLI = "gantry.dev/gpu-milli";
    /** The MIG devices Gantry chose (ids: the MIG UUIDs), comma-separated; with DRA the claim names exactly these. */
    public static final String ANNOTATION_MIG_DEVICES = "gantry.dev/mig-devices";
    public static final String GPU_RESOURCE = "nvidia.com/gpu";

    /** How long gantry remembers the pods it deleted itself, so their disappearance is not taken for someone else's doing. */
    static final Duration DELETION_MEMORY = Duration.ofMinutes(10);

    private final KubernetesClient client;
    private final PodSigningKey signingKey;
    private final DeviceClaims claims;
    /** Queues whose pods an admin lets run without the restricted security context (e.g. as root). */
    private final Set<String> relaxedQueues;
    private final int attempts;
    private final Duration backoff;
    /** namespace/pod -> when gantry asked for its deletion (per replica, in memory only). */
    private final Map<String, Instant> deletedByGantry = new ConcurrentHashMap<>();

    public KubernetesActuator(KubernetesClient client, PodSigningKey signingKey, DeviceClaims claims,
            @ConfigProperty(name = "gantry.placement.kubernetes.relaxed-queues") Optional<List<String>> relaxedQueues,
            @ConfigProperty(name = "gantry.placement.kubernetes.retry.attempts", defaultValue = "4") int attempts,
            @ConfigProperty(name = "gantry.placement.kubernetes.retry.backoff", defaultValue = "200ms") Duration backoff) {
        this.client = client;
        this.signingKey = signingKey;
        this.claims = claims;
        this.relaxedQueues = Set.copyOf(relaxedQueues.orElse(List.of()));
        this.attempts = Math.max(1, attempts);
        this.backoff = backoff;
    }

    @Override
    public boolean acts() {
        return true;
    }

    @Override
    public void launch(Gang gang) {
        String ns = gang.ref().namespace();
        List<String> created = new ArrayList<>();
        List<String> boundUserPods = new ArrayList<>();
        List<String> claimed = new ArrayList<>();
        List<String> userClaims = new ArrayList<>();
        try {
            Map<String, Pod> users = new LinkedHashMap<>();
            for (TaskBinding task : gang.ref().userPods() ? gang.tasks() : List.<TaskBinding>of()) {
                String podName = gang.userPods().get(task.task());
                Pod pod = podName == null ? null : retry("get pod " + podName, () -> client.pods().inNamespace(ns).withName(podName).get());
                if (pod == null) {
                    throw new ClusterActionException("pod for task " + task.task() + " of gang " + gang.ref().label() + " is gone", false, null);
                }
                users.put(task.task(), pod);
            }
            if (claims.enabled() && gang.ref().userPods()) { // every user pod's own claims are allocated before any pod is bound: a bound pod cannot be unbound
                for (TaskBinding task : gang.tasks()) {
                    Pod pod = users.get(task.task());
                    if (pod != null && pod.getSpec().getNodeName() == null) {
                        claims.allocateUserClaims(ns, pod, task, gang.ref().label(), gang.attempt(), userClaims);
                    }
                }
            }
            for (TaskBinding task : gang.tasks()) {
                String podName;
                Pod pod;
                if (gang.ref().userPods()) {
                    pod = users.get(task.task());
                    podName = pod.getMetadata().getName();
                } else {
                    podName = podName(gang, task.task());
                    Pod existing = retry("get pod " + podName, () -> client.pods().inNamespace(ns).withName(podName).get());
                    if (existing == null) {
                        Pod wanted = newPod(gang, task, podName);
                        try {
                            pod = retry("create pod " + podName, () -> client.pods().inNamespace(ns).resource(wanted).create());
                            created.add(podName);
                        } catch (KubernetesClientException e) {
                            // 409: made meanwhile (a retried create that had reached the server, or a relaunch racing the first): use it
                            pod = e.getCode() == 409 ? retry("get pod " + podName, () -> client.pods().inNamespace(ns).withName(podName).get()) : null;
                            if (pod == null) {
                                throw e;
                            }
                            requireMadeByGantry(pod, podName);
                            created.add(podName); // perhaps our own retried create: it goes on a rollback like one we made
                        }
                    } else {
                        requireMadeByGantry(existing, podName);
                        pod = existing; // an earlier launch of this same attempt got this far (restart, or another replica)
                    }
                }
                String boundTo = pod.getSpec() == null ? null : pod.getSpec().getNodeName();
                if (boundTo == null) {
                    if (claims.enabled() && !gang.ref().userPods() && task.hasDevices()) {
                        claimed.add(podName);
                        claims.allocate(ns, pod, task, gang.ref().label(), gang.attempt());
                    }
                    if (bind(ns, podName, task)) {
                        if (gang.ref().userPods()) {
                            boundUserPods.add(podName);
                        }
                        scheduledEvent(ns, pod, podName, task.node());
                    }
                } else if (!boundTo.equals(task.node())) {
                    throw new ClusterActionException("pod " + podName + " is already on " + boundTo + ", not " + task.node(), false, null);
                }
            }
            LOG.infof("gang %s/%s bound: %d pods", ns, gang.ref().label(), gang.tasks().size());
        } catch (RuntimeException e) {
            List<String> undo = new ArrayList<>(created);
            undo.addAll(boundUserPods); // a bound pod cannot be unbound: it goes, and its owner makes a new one
            for (String name : undo) {
                try {
                    remember(ns, name);
                    retry("delete pod " + name, () -> client.pods().inNamespace(ns).withName(name).withGracePeriod(0).delete());
                } catch (RuntimeException cleanup) {
                    LOG.warnf("rolling back gang %s: pod %s not deleted: %s", gang.ref().label(), name, cleanup.toString());
                }
            }
            try {
                claims.release(ns, claimed); // none of these pods will run: their devices go back
                claims.releaseUserClaims(ns, userClaims, Set.copyOf(gang.userPods().values()));
            } catch (RuntimeException cleanup) {
                LOG.warnf("rolling back gang %s: claims not released (the sweep does it): %s", gang.ref().label(), cleanup.toString());
            }
            if (e instanceof ClusterActionException c) {
                throw c;
            }
            throw new ClusterActionException(e.getMessage(), false, e);
        }
    }

    /**
     * A pod of the job's name that Gantry did not make (its provenance signature is missing or wrong)
     * is never reused: someone made it to run their own containers on the job's GPUs. The launch fails
     * for good, with the reason (the job ends FAILED and saying so; its pods, this one included, go).
     */
    private void requireMadeByGantry(Pod pod, String podName) {
        if (!signingKey.provenance().madeByGantry(pod)) {
            throw new ClusterActionException("pod " + podName + " exists but was not made by Gantry (no valid "
                    + PodProvenance.ANNOTATION + " annotation); it is not reused", true, null);
        }
    }

    /**
     * Binds the pod to its node; false when a binding was there already (409: an earlier launch of
     * this attempt bound it; the API server may not show the pod's node yet).
     */
    private boolean bind(String ns, String podName, TaskBinding task) {
        Binding binding = binding(ns, podName, task);
        try {
            retry("bind pod " + podName, () -> client.bindings().inNamespace(ns).resource(binding).create());
            return true;
        } catch (KubernetesClientException e) {
            if (e.getCode() != 409) {
                throw e;
            }
            Pod now = retry("get pod " + podName, () -> client.pods().inNamespace(ns).withName(podName).get());
            String node = now == null || now.getSpec() == null ? null : now.getSpec().getNodeName();
            if (now == null || node != null && !node.equals(task.node())) {
                throw new ClusterActionException("pod " + podName + " is " + (now == null ? "gone" : "already on " + node + ", not " + task.node()),
                        false, e);
            }
            return false;
        }
    }

    @Override
    public void evict(GangRef gang, Duration grace) {
        long seconds = Math.max(0, grace.toSeconds());
        for (Pod pod : pods(gang)) {
            String name = pod.getMetadata().getName();
            if (isFinished(pod)) {
                continue;
            }
            Eviction eviction = new EvictionBuilder().withNewMetadata().withName(name).withNamespace(gang.namespace()).endMetadata()
                    .withDeleteOptions(new DeleteOptionsBuilder().withGracePeriodSeconds(seconds).build()).build();
            remember(gang.namespace(), name);
            boolean evicted;
            try {
                evicted = retry("evict pod " + name, () -> client.pods().inNamespace(gang.namespace()).withName(name).evict(eviction));
            } catch (KubernetesClientException e) {
                if (e.getCode() != 404 && e.getCode() != 405 && e.getCode() != 409) {
                    throw e;
                }
                evicted = false; // no eviction subresource here: deleting with the same grace does the same
            }
            if (!evicted) {
                // a disruption budget said no: a preemption goes ahead anyway, with the same grace (as kube-scheduler's does)
                retry("delete pod " + name, () -> client.pods().inNamespace(gang.namespace()).withName(name).withGracePeriod(seconds).delete());
            }
            LOG.infof("pod %s/%s evicted (grace %ds)", gang.namespace(), name, seconds);
        }
    }

    @Override
    public void stop(GangRef gang) {
        if (gang.userPods()) {
            return;
        }
        List<String> names = new ArrayList<>();
        for (Pod pod : pods(gang)) {
            String name = pod.getMetadata().getName();
            remember(gang.namespace(), name);
            retry("delete pod " + name, () -> client.pods().inNamespace(gang.namespace()).withName(name).delete());
            names.add(name);
        }
        claims.release(gang.namespace(), names);
    }

    /** Remembers a pod gantry is about to delete (before the call: the informer may report it gone before the call returns). */
    private void remember(String namespace, String pod) {
        Instant now = Instant.now();
        deletedByGantry.values().removeIf(at -> at.plus(DELETION_MEMORY).isBefore(now));
        deletedByGantry.put(namespace + "/" + pod, now);
    }

    /** Whether gantry itself deleted (or evicted) this pod in the last {@link #DELETION_MEMORY}. */
    public boolean deletedByGantry(String namespace, String pod) {
        Instant at = deletedByGantry.get(namespace + "/" + pod);
        return at != null && at.plus(DELETION_MEMORY).isAfter(Instant.now());
    }

    private List<Pod> pods(GangRef gang) {
        return retry("list pods of " + gang.label(),
                () -> client.pods().inNamespace(gang.namespace()).withLabel(LABEL_JOB, gang.label()).list().getItems());
    }

    private static boolean isFinished(Pod pod) {
        String phase = pod.getStatus() == null ? null : pod.getStatus().getPhase();
        return "Succeeded".equals(phase) || "Failed".equals(phase);
    }

    /** {@code <job name>-<id prefix>-<task>-<attempt>}, DNS-safe and at most 63 characters. */
    static String podName(Gang gang, String task) {
        return podName(gang.ref().jobId(), gang.spec().name(), task, gang.attempt());
    }

    /** The name of the pod gantry creates for a task of an API job's placement attempt. */
    public static String podName(UUID jobId, String jobName, String task, int attempt) {
        String id = jobId.toString().substring(0, 8);
        String suffix = "-" + id + "-" + dns(task) + "-" + attempt;
        String name = dns(jobName == null ? "job" : jobName);
        int room = Math.max(1, 63 - suffix.length());
        name = name.length() > room ? name.substring(0, room) : name;
        return (name + suffix).replaceAll("-+", "-").replaceAll("^-|-$", "");
    }

    private static String dns(String s) {
        String d = s.toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9-]", "-").replaceAll("^-+|-+$", "");
        return d.isEmpty() ? "x" : d;
    }

    /** A label value: at most 63 of [A-Za-z0-9._-], alphanumeric at both ends. */
    private static String labelValue(String s) {
        String v = s.replaceAll("[^A-Za-z0-9._-]", "-");
        v = v.length() > 63 ? v.substring(0, 63) : v;
        return v.replaceAll("^[^A-Za-z0-9]+|[^A-Za-z0-9]+$", "");
    }

    private static String indices(List<Integer> gpus) {
        return gpus.stream().map(String::valueOf).collect(Collectors.joining(","));
    }

    private Pod newPod(Gang gang, TaskBinding task, String podName) {
        JobQueued.TaskGroup group = groupOf(gang.spec(), task.task());
        if (group == null || group.image() == null || group.image().isBlank()) {
            throw new ClusterActionException("task group of " + task.task() + " has no image", true, null);
        }
        Map<String, Quantity> limits = new LinkedHashMap<>();
        Map<String, Quantity> requests = new LinkedHashMap<>();
        boolean claim = claims.enabled() && task.hasDevices();
        if (!claim && task.gpuMilli() == null && !task.gpus().isEmpty()) {
            limits.put(GPU_RESOURCE, new Quantity(String.valueOf(task.gpus().size())));
        }
        if (!claim && !task.migDevices().isEmpty() && task.migProfile() != null) {
            // the device plugin's mixed strategy: its kubelet picks which devices of the profile the pod gets
            limits.put(MigProfile.resourceName(task.migProfile()), new Quantity(String.valueOf(task.migDevices().size())));
        }
        if (group.cpuMillis() > 0) {
            requests.put("cpu", new Quantity(group.cpuMillis() + "m"));
        }
        if (group.memoryMiB() > 0) {
            requests.put("memory", new Quantity(group.memoryMiB() + "Mi"));
        }
        Map<String, String> annotations = new LinkedHashMap<>();
        annotations.put(ANNOTATION_GPU_INDICES, indices(task.gpus()));
        annotations.put(PodProvenance.ANNOTATION,
                signingKey.provenance().sign(gang.ref().namespace(), podName, gang.ref().label(), gang.attempt()));
        if (task.gpuMilli() != null) {
            annotations.put(ANNOTATION_GPU_MILLI, String.valueOf(task.gpuMilli()));
        }
        if (!task.migDevices().isEmpty()) {
            annotations.put(ANNOTATION_MIG_DEVICES, String.join(",", task.migDevices()));
        }
        ContainerBuilder container = new ContainerBuilder().withName(dns(group.name())).withImage(group.image())
                .withNewResources().withLimits(limits).withRequests(requests).endResources();
        if (claim) { // the driver gives the container exactly the claim's devices
            container.editResources().addNewClaim().withName(DeviceClaims.REQUEST).endClaim().endResources();
        }
        if (!relaxedQueues.contains(gang.spec().queue())) {
            // Pod Security "restricted": no root, no privilege escalation, no capabilities, the runtime's seccomp profile
            container.withNewSecurityContext().withRunAsNonRoot(true).withAllowPrivilegeEscalation(false)
                    .withNewCapabilities().withDrop("ALL").endCapabilities()
                    .withNewSeccompProfile().withType("RuntimeDefault").endSeccompProfile()
                    .endSecurityContext();
        }
        if (group.command() != null && !group.command().isEmpty()) {
            container.withCommand(group.command());
        }
        return new PodBuilder()
                .withNewMetadata().withName(podName).withNamespace(gang.ref().namespace())
                .addToLabels(LABEL_JOB, gang.ref().label())
                .addToLabels(LABEL_QUEUE, labelValue(gang.spec().queue()))
                .addToLabels(LABEL_TASK, labelValue(task.task()))
                .addToLabels(LABEL_MANAGED_BY, SCHEDULER_NAME)
                .addToLabels(LABEL_ATTEMPT, String.valueOf(gang.attempt()))
                .withAnnotations(annotations)
                .endMetadata()
                .withNewSpec().withSchedulerName(SCHEDULER_NAME).withRestartPolicy("Never")
                // a training job has no business with the Kubernetes API: no service-account token in its pods
                .withAutomountServiceAccountToken(false)
                .withContainers(container.build())
                .withResourceClaims(claim ? List.of(new io.fabric8.kubernetes.api.model.PodResourceClaimBuilder()
                        .withName(DeviceClaims.REQUEST).withResourceClaimName(DeviceClaims.claimName(podName, task)).build()) : List.of())
                .endSpec()
                .build();
    }

    private static Binding binding(String ns, String podName, TaskBinding task) {
        Map<String, String> annotations = new LinkedHashMap<>(); // the API server copies these onto the pod
        annotations.put(ANNOTATION_GPU_INDICES, indices(task.gpus()));
        if (!task.migDevices().isEmpty()) { // a user's pod learns which MIG devices Gantry counted it on
            annotations.put(ANNOTATION_MIG_DEVICES, String.join(",", task.migDevices()));
        }
        return new BindingBuilder()
                .withNewMetadata().withName(podName).withNamespace(ns).withAnnotations(annotations)
                .endMetadata()
                .withNewTarget().withApiVersion("v1").withKind("Node").withName(task.node()).endTarget()
                .build();
    }

    /** What {@code kubectl describe pod} shows; best effort (a lost event never fails a binding). */
    private void scheduledEvent(String ns, Pod pod, String podName, String node) {
        try {
            String now = Instant.now().toString();
            client.v1().events().inNamespace(ns).resource(new EventBuilder()
                    .withNewMetadata().withGenerateName(podName + ".").withNamespace(ns).endMetadata()
                    .withNewInvolvedObject().withKind("Pod").withApiVersion("v1").withNamespace(ns).withName(podName)
                    .withUid(pod.getMetadata() == null ? null : pod.getMetadata().getUid()).endInvolvedObject()
                    .withType("Normal").withReason("Scheduled").withMessage("Successfully assigned " + ns + "/" + podName + " to " + node)
                    .withNewSource().withComponent(SCHEDULER_NAME).endSource()
                    .withFirstTimestamp(now).withLastTimestamp(now).withCount(1)
                    .build()).create();
        } catch (RuntimeException e) {
            LOG.debugf("event for pod %s not recorded: %s", podName, e.toString());
        }
    }

    private static JobQueued.TaskGroup groupOf(JobQueued spec, String task) {
        String group = task.replaceFirst("-\\d+$", "");
        return spec.taskGroups().stream().filter(g -> g.name().equals(group)).findFirst().orElse(null);
    }

    /** Runs an API call, retrying transient failures with exponential backoff. */
    <T> T retry(String what, Supplier<T> call) {
        long wait = backoff.toMillis();
        for (int attempt = 1; ; attempt++) {
            try {
                return call.get();
            } catch (KubernetesClientException e) {
                if (attempt >= attempts || !transient_(e)) {
                    throw e;
                }
                LOG.debugf("%s failed (%s), retry %d in %d ms", what, e.getMessage(), attempt, wait);
            }
            try {
                Thread.sleep(wait);
            } catch (InterruptedException ie) {
                Thread.currentThread().interrupt();
                throw new ClusterActionException(what + " interrupted", false, ie);
            }
            wait *= 2;
        }
    }

    private static boolean transient_(KubernetesClientException e) {
        int code = e.getCode();
        return code == 0 && (e.getCause() instanceof IOException || e.getCause() == null)
                || code == 429 || code == 500 || code == 502 || code == 503 || code == 504;
    }
}
