package dev.gantry.placement.kubernetes;

import dev.gantry.placement.cluster.BinderMode;
import dev.gantry.placement.cluster.ClusterActionException;
import dev.gantry.placement.cluster.ClusterActuator;
import dev.gantry.placement.cluster.HeldElsewhere;
import dev.gantry.placement.window.ScenarioBuilder;
import io.fabric8.kubernetes.api.model.NodeSelector;
import io.fabric8.kubernetes.api.model.NodeSelectorBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceAllocationConfigurationBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequestAllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequestAllocationResultBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimConsumerReference;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimConsumerReferenceBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimStatus;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimStatusBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.runtime.StartupEvent;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.enterprise.inject.Instance;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.UUID;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.jboss.logging.Logger;

/**
 * Dynamic Resource Allocation for Gantry's own pods ({@code gantry.placement.kubernetes.dra.enabled}):
 * the ResourceClaims that make the GPU driver give a pod exactly the GPUs Gantry chose.
 *
 * <ul>
 * <li>A task with whole GPUs gets a claim of its own, {@code <pod>-gpus}, asking for that many devices of
 *     the DeviceClass {@code dra.device-class}, owned by the pod (the garbage collector removes it with the
 *     pod). Before the pod is bound its {@code status.allocation} names exactly the devices of the chosen
 *     GPU indices (driver, pool, device, from the driver's ResourceSlices) and {@code reservedFor} the pod,
 *     as kube-scheduler's DRA plugin writes it for the pods it schedules.</li>
 * <li>A shared task (a share of one GPU) references the shared claim of its GPU in the namespace,
 *     {@code gantry-shared-<node>-gpu<i>}, which carries the driver's sharing configuration
 *     ({@code dra.sharing}: {@code TimeSlicing} or {@code MPS}); every pod on that GPU is in its
 *     {@code reservedFor}, as the driver's own shared-claim example has several pods reference one claim.</li>
 * <li>Release: a claim whose gang is no longer placed (completed, failed, requeued, rolled back) or whose pod
 *     finished is deallocated (status cleared) and deleted; a shared claim loses the pod's entry and goes
 *     with its last one. {@link #release} does it at once on a rollback; {@link #sweep} finds the rest.</li>
 * <li>A task on MIG devices gets a claim of its own too, asking for that many devices of the DeviceClass
 *     {@code dra.mig-device-class} ({@code mig.nvidia.com}, NVIDIA's class of MIG devices) with a selector on the
 *     profile; its allocation names exactly the chosen MIG devices (found by the id the inventory gives them, the
 *     MIG UUID).</li>
 * <li>A user's pod (of a user's gang) that references claims of its own: {@link #ask} reads what they ask for
 *     ({@link UserClaims}); before the gang's pods are bound {@link #allocateUserClaims} allocates them to exactly the
 *     task's devices, reserved for the pod and marked {@code gang.gantry.dev/<pod>}; the rollback and the sweep take the
 *     pod's reservation and mark off again and clear the allocation with the last, never deleting the claim.</li>
 * <li>Devices allocated to claims Gantry neither made nor allocated for a user's pod are occupied: {@link #held()} lists
 *     them per node for the window (whole GPUs by index, MIG devices by id).</li>
 * </ul>
 * The model is fabric8's {@code resource.k8s.io/v1} (Kubernetes 1.34, DRA GA): {@link #API_VERSION}. All calls block.
 */
@ApplicationScoped
public class DeviceClaims implements HeldElsewhere {

    private static final Logger LOG = Logger.getLogger(DeviceClaims.class);

    /** The one API version of the DRA objects Gantry reads and writes (the imports follow it). */
    public static final String API_VERSION = "resource.k8s.io/v1";
    /** The request name in every claim Gantry makes, and the pod's name for the claim. */
    public static final String REQUEST = "gpus";
    public static final String LABEL_KIND = "gantry.dev/claim";
    public static final String KIND_TASK = "task";
    public static final String KIND_SHARED = "shared";
    public static final String LABEL_POD = "gantry.dev/pod";
    /** On a shared claim, per pod reserved: {@code <gang label>/<attempt>}. */
    public static final String GANG_ANNOTATION_PREFIX = "gang.gantry.dev/";
    /** The opaque configuration's API of NVIDIA's driver (its {@code api/nvidia.com/resource/v1beta1/gpuconfig.go}). */
    static final String NVIDIA_CONFIG_API = "resource.nvidia.com/v1beta1";

    private final boolean enabled;
    private final String driver;
    private final String deviceClass;
    private final String migDeviceClass;
    private final String sharing;
    private final String namespace;
    private final Instance<KubernetesClient> client;
    private volatile SharedIndexInformer<ResourceSlice> slices;
    private volatile SharedIndexInformer<ResourceClaim> claims;

    public DeviceClaims(BinderMode mode, Instance<KubernetesClient> client,
            @ConfigProperty(name = "gantry.placement.kubernetes.dra.enabled", defaultValue = "false") boolean enabled,
            @ConfigProperty(name = "gantry.placement.kubernetes.dra.driver", defaultValue = "gpu.nvidia.com") String driver,
            @ConfigProperty(name = "gantry.placement.kubernetes.dra.device-class", defaultValue = "gpu.nvidia.com") String deviceClass,
            @ConfigProperty(name = "gantry.placement.kubernetes.dra.mig-device-class", defaultValue = "mig.nvidia.com") String migDeviceClass,
            @ConfigProperty(name = "gantry.placement.kubernetes.dra.sharing", defaultValue = "TimeSlicing") String sharing,
            @ConfigProperty(name = "gantry.placement.kubernetes.namespace", defaultValue = "gantry") String namespace) {
        this.enabled = mode.kubernetes() && enabled;
        if (!"TimeSlicing".equals(sharing) && !"MPS".equals(sharing)) {
            throw new IllegalArgumentException("gantry.placement.kubernetes.dra.sharing must be TimeSlicing or MPS, not " + sharing);
        }
        this.driver = driver;
        this.deviceClass = deviceClass;
        this.migDeviceClass = migDeviceClass;
        this.sharing = sharing;
        this.namespace = namespace;
        this.client = client;
    }

    /** Whether pods get claims (kubernetes mode and DRA on) instead of {@code nvidia.com/gpu} limits. */
    public boolean enabled() {
        return enabled;
    }

    void start(@Observes StartupEvent event) {
        if (!enabled) {
            return;
        }
        KubernetesClient k = client.get();
        if (k.resources(io.fabric8.kubernetes.api.model.resource.v1.DeviceClass.class).withName(deviceClass).get() == null) {
            LOG.warnf("DeviceClass %s does not exist: the claims Gantry makes ask for it (is the GPU driver %s installed?)", deviceClass, driver);
        }
        slices = k.resources(ResourceSlice.class).inform();
        claims = k.resources(ResourceClaim.class).inAnyNamespace().inform();
        LOG.infof("DRA: claims for device class %s, devices of driver %s, sharing %s (%s)", deviceClass, driver, sharing, API_VERSION);
    }

    void stop(@Observes ShutdownEvent event) {
        if (slices != null) {
            slices.close();
        }
        if (claims != null) {
            claims.close();
        }
    }

    /** Whether the informers have their first lists (before that nothing is known of others' devices). */
    public boolean synced() {
        return !enabled || slices != null && slices.hasSynced() && claims != null && claims.hasSynced();
    }

    private DraDevices devices() {
        return DraDevices.of(driver, slices.getStore().list());
    }

    // --- the pod's side ---

    /** The claim a task's pod references: its own, or its GPU's shared one. */
    public static String claimName(String podName, ClusterActuator.TaskBinding task) {
        if (task.gpuMilli() != null) {
            return "gantry-shared-" + dns(task.node()) + "-gpu" + task.gpus().get(0);
        }
        return podName + "-" + REQUEST;
    }

    private static String dns(String s) {
        String d = s.toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9-]", "-").replaceAll("^-+|-+$", "");
        return d.isEmpty() ? "x" : d;
    }

    // --- allocation ---

    /**
     * The pod's claim exists (made if missing) and is allocated to exactly the task's GPUs and reserved for
     * the pod. Idempotent: a claim an earlier launch of this attempt allocated the same way is left as it is.
     * Refused (no change) when the node's driver publishes no device for a chosen GPU, when a chosen device is
     * allocated to a claim Gantry did not make, or when the claim is allocated to other devices.
     */
    public void allocate(String ns, Pod pod, ClusterActuator.TaskBinding task, String gangLabel, int attempt) {
        String podName = pod.getMetadata().getName();
        String name = claimName(podName, task);
        DraDevices devices = devices();
        List<DraDevices.DeviceRef> wanted = new ArrayList<>();
        for (int gpu : task.gpus()) {
            DraDevices.DeviceRef ref = devices.gpu(task.node(), gpu);
            if (ref == null) {
                throw new ClusterActionException("node " + task.node() + " publishes no device of driver " + driver + " for GPU " + gpu
                        + " (no ResourceSlice names it)", false, null);
            }
            wanted.add(ref);
        }
        for (String mig : task.migDevices()) {
            DraDevices.DeviceRef ref = devices.mig(task.node(), mig);
            if (ref == null) {
                throw new ClusterActionException("node " + task.node() + " publishes no MIG device " + mig + " of driver " + driver
                        + " (no ResourceSlice names it)", false, null);
            }
            wanted.add(ref);
        }
        requireNotHeldByOthers(wanted, devices);
        var api = client.get().resources(ResourceClaim.class).inNamespace(ns);
        for (int attemptNo = 0; ; attemptNo++) {
            ResourceClaim claim = api.withName(name).get();
            if (claim == null) {
                ResourceClaim made = task.gpuMilli() != null ? sharedClaim(ns, name, task) : ownClaim(ns, name, pod, task, gangLabel, attempt, devices);
                try {
                    claim = api.resource(made).create();
                } catch (KubernetesClientException e) {
                    if (e.getCode() != 409) {
                        throw e;
                    }
                    continue; // made meanwhile (a retried create, another pod of the GPU): read it again
                }
            }
            ResourceClaimStatus status = claim.getStatus();
            List<DraDevices.DeviceRef> allocated = allocatedDevices(claim);
            if (!allocated.isEmpty() && !new TreeSet<>(keys(allocated)).equals(new TreeSet<>(keys(wanted)))) {
                throw new ClusterActionException("claim " + ns + "/" + name + " is allocated to " + keys(allocated) + ", not " + keys(wanted),
                        false, null);
            }
            if (!allocated.isEmpty() && reserves(claim, pod) && (task.gpuMilli() == null || gangOf(claim, podName) != null)) {
                return; // an earlier launch of this attempt did it
            }
            List<ResourceClaimConsumerReference> reserved = new ArrayList<>(status == null || status.getReservedFor() == null
                    ? List.of() : status.getReservedFor());
            reserved.removeIf(r -> podName.equals(r.getName()));
            reserved.add(new ResourceClaimConsumerReferenceBuilder().withApiGroup("").withResource("pods").withName(podName)
                    .withUid(pod.getMetadata().getUid()).build());
            ResourceClaimStatus next = new ResourceClaimStatusBuilder()
                    .withAllocation(allocated.isEmpty() ? allocation(claim, wanted, task.node()) : status.getAllocation())
                    .withReservedFor(reserved)
                    .withDevices(status == null ? null : status.getDevices())
                    .build();
            try {
                if (task.gpuMilli() != null && !(gangLabel + "/" + attempt).equals(gangOf(claim, podName))) {
                    // which gang each pod of a shared GPU belongs to, so the sweep knows when its share is over
                    claim = api.resource(new ResourceClaimBuilder(claim).editMetadata()
                            .addToAnnotations(GANG_ANNOTATION_PREFIX + podName, gangLabel + "/" + attempt).endMetadata().build()).update();
                }
                api.resource(new ResourceClaimBuilder(claim).withStatus(next).build()).updateStatus();
                LOG.debugf("claim %s/%s allocated to %s, reserved for pod %s", ns, name, keys(wanted), podName);
                return;
            } catch (KubernetesClientException e) {
                if (e.getCode() != 409 || attemptNo >= 5) {
                    throw e;
                }
                // changed meanwhile (another pod of a shared GPU): read and try again
            }
        }
    }

    // --- users' own claims ---

    /**
     * What a user's pod's own claims ask for, read from the informer ({@link UserClaims}); {@link UserClaims.Ask#NONE} when it
     * references none or DRA is off; null while one is not known yet (a template's claim not made, or not seen yet).
     */
    public UserClaims.Ask ask(Pod pod) {
        if (!enabled || UserClaims.references(pod).isEmpty()) {
            return UserClaims.Ask.NONE;
        }
        if (!synced()) {
            return null;
        }
        UserClaims.Ask ask = UserClaims.Ask.NONE;
        for (var ref : UserClaims.references(pod)) {
            String name = UserClaims.claimName(pod, ref);
            ResourceClaim claim = name == null ? null : claims.getStore().getByKey(pod.getMetadata().getNamespace() + "/" + name);
            if (claim == null) {
                return null;
            }
            ask = ask.plus(UserClaims.read(name, claim.getSpec(), driver, deviceClass, migDeviceClass));
        }
        return ask;
    }

    /**
     * A user's pod's own claims are allocated to exactly the task's devices (each request its share, in the order of the pod's
     * claims and their requests) and reserved for the pod, as kube-scheduler writes it, each marked {@code gang.gantry.dev/<pod>}
     * first (so its devices count as Gantry's, and the sweep releases it). Each claim's name goes into {@code touched} before
     * it is written, for a rollback's {@link #releaseUserClaims}. Idempotent. Refused (no change): a claim not made yet (a
     * template's: retried), a claim allocated by someone else (never overwritten), claims that no longer ask for what was placed.
     */
    public void allocateUserClaims(String ns, Pod pod, ClusterActuator.TaskBinding task, String gangLabel, int attempt, List<String> touched) {
        String podName = pod.getMetadata().getName();
        var api = client.get().resources(ResourceClaim.class).inNamespace(ns);
        List<ResourceClaim> mine = new ArrayList<>();
        UserClaims.Ask ask = UserClaims.Ask.NONE;
        for (var ref : UserClaims.references(pod)) {
            String name = UserClaims.claimName(pod, ref);
            ResourceClaim claim = name == null ? null : api.withName(name).get();
            if (claim == null) {
                throw new ClusterActionException("pod " + podName + ": claim " + (name != null ? name + " does not exist"
                        : "of " + ref.getName() + " (template " + ref.getResourceClaimTemplateName() + ") is not made yet") + "; retried", false, null);
            }
            mine.add(claim);
            ask = ask.plus(UserClaims.read(name, claim.getSpec(), driver, deviceClass, migDeviceClass));
        }
        if (mine.isEmpty()) {
            return;
        }
        boolean mig = !task.migDevices().isEmpty();
        int held = mig ? task.migDevices().size() : task.gpus().size();
        if (ask.refused() || ask.devices() != held || !java.util.Objects.equals(ask.migProfile(), mig ? task.migProfile() : null)) {
            throw new ClusterActionException("pod " + podName + ": " + (ask.refused() ? ask.refusal() : ask.asked()) + ", but it was placed on "
                    + (mig ? task.migDevices() : "GPUs " + task.gpus()), true, null);
        }
        DraDevices devices = devices();
        List<DraDevices.DeviceRef> wanted = new ArrayList<>();
        for (int gpu : task.gpus()) {
            DraDevices.DeviceRef r = devices.gpu(task.node(), gpu);
            if (r == null) {
                throw new ClusterActionException("node " + task.node() + " publishes no device of driver " + driver + " for GPU " + gpu, false, null);
            }
            wanted.add(r);
        }
        for (String id : task.migDevices()) {
            DraDevices.DeviceRef r = devices.mig(task.node(), id);
            if (r == null) {
                throw new ClusterActionException("node " + task.node() + " publishes no MIG device " + id + " of driver " + driver, false, null);
            }
            wanted.add(r);
        }
        requireNotHeldByOthers(wanted, devices);
        int next = 0;
        for (ResourceClaim claim : mine) {
            List<DraDevices.DeviceRef> share = new ArrayList<>();
            List<String> requests = new ArrayList<>();
            for (UserClaims.Request r : UserClaims.requests(claim.getSpec())) {
                for (int i = 0; i < r.count(); i++) {
                    share.add(wanted.get(next++));
                    requests.add(r.name());
                }
            }
            allocateUserClaim(ns, claim, pod, share, requests, task.node(), gangLabel + "/" + attempt, touched);
        }
    }

    private void allocateUserClaim(String ns, ResourceClaim claim, Pod pod, List<DraDevices.DeviceRef> share, List<String> requests,
            String node, String gang, List<String> touched) {
        String podName = pod.getMetadata().getName();
        String name = claim.getMetadata().getName();
        var api = client.get().resources(ResourceClaim.class).inNamespace(ns);
        touched.add(name); // a rollback releases only what carries this pod's mark
        for (int attemptNo = 0; ; attemptNo++) {
            boolean allocated = claim.getStatus() != null && claim.getStatus().getAllocation() != null;
            if (allocated) {
                if (gang.equals(gangs(claim).get(podName)) && reserves(claim, pod)
                        && new TreeSet<>(keys(allocatedDevices(claim))).equals(new TreeSet<>(keys(share)))) {
                    return; // an earlier launch of this placement did it
                }
                if (gangs(claim).isEmpty()) {
                    throw new ClusterActionException("claim " + ns + "/" + name + " of pod " + podName + " is allocated already, not by Gantry, to "
                            + keys(allocatedDevices(claim)) + ": not overwritten", true, null);
                }
                // another pod of this gang has it: one claim for two tasks' devices cannot be; else an older placement's, released by then
                boolean shared = gangs(claim).entrySet().stream().anyMatch(e -> !e.getKey().equals(podName) && e.getValue().equals(gang));
                throw new ClusterActionException("claim " + ns + "/" + name + " is allocated by Gantry for pods " + gangs(claim)
                        + " to " + keys(allocatedDevices(claim)) + ", not " + keys(share) + " for pod " + podName
                        + (shared ? ": a claim shared by pods of one gang is not supported" : "; retried"), shared, null);
            }
            try {
                if (!gang.equals(gangs(claim).get(podName))) { // marked first: a claim allocated by Gantry is always known as Gantry's
                    claim = api.resource(new ResourceClaimBuilder(claim).editMetadata()
                            .addToAnnotations(GANG_ANNOTATION_PREFIX + podName, gang).endMetadata().build()).update();
                }
                ResourceClaimStatus next = new ResourceClaimStatusBuilder()
                        .withAllocation(allocation(claim, share, requests, node))
                        .withReservedFor(new ResourceClaimConsumerReferenceBuilder().withApiGroup("").withResource("pods").withName(podName)
                                .withUid(pod.getMetadata().getUid()).build())
                        .build();
                api.resource(new ResourceClaimBuilder(claim).withStatus(next).build()).updateStatus();
                LOG.debugf("user claim %s/%s allocated to %s, reserved for pod %s", ns, name, keys(share), podName);
                return;
            } catch (KubernetesClientException e) {
                if (e.getCode() != 409 || attemptNo >= 5) {
                    throw e;
                }
                claim = api.withName(name).get(); // changed meanwhile: read it again (allocated by someone else now?)
                if (claim == null) {
                    throw new ClusterActionException("claim " + ns + "/" + name + " was deleted", false, e);
                }
            }
        }
    }

    /** A rollback: the users' claims a launch touched lose these pods' reservations and marks, and their allocation with the last. */
    public void releaseUserClaims(String ns, List<String> claimNames, Set<String> pods) {
        for (String name : new TreeSet<>(claimNames)) {
            try {
                releaseUserClaim(ns, name, pods);
            } catch (KubernetesClientException e) {
                LOG.warnf("claim %s/%s not released (the sweep retries): %s", ns, name, e.getMessage());
            }
        }
    }

    /**
     * The pods' entries go from a user's claim (status first, then their marks); with no reservation left the allocation goes too.
     * Never deleted (the claim is the user's; a template's claim goes with its pod). An allocation reserved for someone else's pod
     * stays.
     */
    private void releaseUserClaim(String ns, String name, Set<String> pods) {
        var api = client.get().resources(ResourceClaim.class).inNamespace(ns);
        for (int attempt = 0; ; attempt++) {
            ResourceClaim fresh = api.withName(name).get();
            if (fresh == null || madeByGantry(fresh) || pods.stream().noneMatch(p -> gangs(fresh).containsKey(p))) {
                return;
            }
            try {
                ResourceClaim now = fresh;
                List<ResourceClaimConsumerReference> left = new ArrayList<>(fresh.getStatus() == null || fresh.getStatus().getReservedFor() == null
                        ? List.of() : fresh.getStatus().getReservedFor());
                if (left.removeIf(r -> pods.contains(r.getName())) || fresh.getStatus() != null && fresh.getStatus().getAllocation() != null
                        && left.isEmpty()) {
                    ResourceClaimStatus next = left.isEmpty() ? new ResourceClaimStatus()
                            : new ResourceClaimStatusBuilder(fresh.getStatus()).withReservedFor(left).build();
                    now = api.resource(new ResourceClaimBuilder(fresh).withStatus(next).build()).updateStatus();
                }
                ResourceClaimBuilder b = new ResourceClaimBuilder(now);
                pods.forEach(p -> b.editMetadata().removeFromAnnotations(GANG_ANNOTATION_PREFIX + p).endMetadata());
                api.resource(b.build()).update();
                return;
            } catch (KubernetesClientException e) {
                if (e.getCode() != 409 || attempt >= 5) {
                    throw e;
                }
            }
        }
    }

    private void requireNotHeldByOthers(List<DraDevices.DeviceRef> wanted, DraDevices devices) {
        Set<DraDevices.DeviceRef> want = Set.copyOf(wanted);
        for (ResourceClaim c : claims.getStore().list()) {
            if (gantrys(c)) {
                continue;
            }
            for (DraDevices.DeviceRef ref : allocatedDevices(c)) {
                DraDevices.GpuPlace place = devices.place(ref);
                // the same device; or a whole GPU on one side and that GPU (or a MIG device of it) on the other: two MIG
                // devices of one GPU do not clash
                boolean clash = want.contains(ref) || place != null && wanted.stream().anyMatch(w -> place.equals(devices.place(w))
                        && (devices.migOf(ref) == null || devices.migOf(w) == null));
                if (clash) {
                    throw new ClusterActionException("device " + ref.device() + " of pool " + ref.pool() + " is allocated to claim "
                            + c.getMetadata().getNamespace() + "/" + c.getMetadata().getName() + ", which Gantry did not make", false, null);
                }
            }
        }
    }

    private ResourceClaim ownClaim(String ns, String name, Pod pod, ClusterActuator.TaskBinding task, String gangLabel, int attempt,
            DraDevices devices) {
        boolean mig = !task.migDevices().isEmpty();
        var request = new io.fabric8.kubernetes.api.model.resource.v1.ExactDeviceRequestBuilder()
                .withDeviceClassName(mig ? migDeviceClass : deviceClass).withAllocationMode("ExactCount")
                .withCount((long) (mig ? task.migDevices().size() : task.gpus().size()));
        String profile = mig ? task.migProfile() : null;
        if (mig && profile == null) { // a row written before MIG profiles were kept: the devices say
            DraDevices.MigRef first = devices.migOf(devices.mig(task.node(), task.migDevices().getFirst()));
            profile = first == null ? null : first.profile();
        }
        if (profile != null) { // what the claim asks for, readable in it: MIG devices of the profile the job asked for
            request.addNewSelector().withNewCel().withExpression("device.attributes['" + driver + "'].profile == '" + profile + "'")
                    .endCel().endSelector();
        }
        return new ResourceClaimBuilder()
                .withNewMetadata().withName(name).withNamespace(ns)
                .addToLabels(KubernetesActuator.LABEL_MANAGED_BY, KubernetesActuator.SCHEDULER_NAME)
                .addToLabels(LABEL_KIND, KIND_TASK)
                .addToLabels(LABEL_POD, pod.getMetadata().getName())
                .addToLabels(KubernetesActuator.LABEL_JOB, gangLabel)
                .addToLabels(KubernetesActuator.LABEL_ATTEMPT, String.valueOf(attempt))
                .addNewOwnerReference().withApiVersion("v1").withKind("Pod").withName(pod.getMetadata().getName())
                .withUid(pod.getMetadata().getUid()).endOwnerReference()
                .endMetadata()
                .withNewSpec().withNewDevices()
                .addNewRequest().withName(REQUEST).withExactly(request.build()).endRequest()
                .endDevices().endSpec()
                .build();
    }

    private ResourceClaim sharedClaim(String ns, String name, ClusterActuator.TaskBinding task) {
        return new ResourceClaimBuilder()
                .withNewMetadata().withName(name).withNamespace(ns)
                .addToLabels(KubernetesActuator.LABEL_MANAGED_BY, KubernetesActuator.SCHEDULER_NAME)
                .addToLabels(LABEL_KIND, KIND_SHARED)
                .endMetadata()
                .withNewSpec().withNewDevices()
                .addNewRequest().withName(REQUEST).withNewExactly().withDeviceClassName(deviceClass).withAllocationMode("ExactCount")
                .withCount(1L).endExactly().endRequest()
                .addNewConfig().withRequests(REQUEST).withNewOpaque().withDriver(driver).withParameters(sharingParameters()).endOpaque().endConfig()
                .endDevices().endSpec()
                .build();
    }

    /** The driver's {@code GpuConfig} with its sharing strategy ({@code api/nvidia.com/resource/v1beta1/sharing.go}). */
    Map<String, Object> sharingParameters() {
        Map<String, Object> strategy = new LinkedHashMap<>();
        strategy.put("strategy", sharing);
        if ("TimeSlicing".equals(sharing)) {
            strategy.put("timeSlicingConfig", Map.of("interval", "Default"));
        }
        Map<String, Object> config = new LinkedHashMap<>();
        config.put("apiVersion", NVIDIA_CONFIG_API);
        config.put("kind", "GpuConfig");
        config.put("sharing", strategy);
        return config;
    }

    /** What kube-scheduler's allocator writes: the devices per request, the claim's configuration, and the node. */
    private io.fabric8.kubernetes.api.model.resource.v1.AllocationResult allocation(ResourceClaim claim, List<DraDevices.DeviceRef> devices,
            String node) {
        return allocation(claim, devices, devices.stream().map(d -> REQUEST).toList(), node);
    }

    /** {@code requests}: the request each device is for, in the order of {@code devices}. */
    private io.fabric8.kubernetes.api.model.resource.v1.AllocationResult allocation(ResourceClaim claim, List<DraDevices.DeviceRef> devices,
            List<String> requests, String node) {
        List<DeviceRequestAllocationResult> results = new ArrayList<>();
        for (int i = 0; i < devices.size(); i++) {
            DraDevices.DeviceRef d = devices.get(i);
            results.add(new DeviceRequestAllocationResultBuilder()
                    .withRequest(requests.get(i)).withDriver(d.driver()).withPool(d.pool()).withDevice(d.device()).build());
        }
        List<io.fabric8.kubernetes.api.model.resource.v1.DeviceAllocationConfiguration> config = new ArrayList<>();
        if (claim.getSpec() != null && claim.getSpec().getDevices() != null && claim.getSpec().getDevices().getConfig() != null) {
            claim.getSpec().getDevices().getConfig().forEach(c -> config.add(new DeviceAllocationConfigurationBuilder()
                    .withSource("FromClaim").withRequests(c.getRequests()).withOpaque(c.getOpaque()).build()));
        }
        NodeSelector onNode = new NodeSelectorBuilder().addNewNodeSelectorTerm().addNewMatchField().withKey("metadata.name")
                .withOperator("In").withValues(node).endMatchField().endNodeSelectorTerm().build();
        return new io.fabric8.kubernetes.api.model.resource.v1.AllocationResultBuilder()
                .withNewDevices().withResults(results).withConfig(config).endDevices()
                .withNodeSelector(onNode)
                .withAllocationTimestamp(Instant.now().toString())
                .build();
    }

    // --- release ---

    /** The pods' claims go at once (a rollback: none of these pods will run). Best effort: {@link #sweep} retries. */
    public void release(String ns, List<String> podNames) {
        if (!enabled || podNames.isEmpty()) {
            return;
        }
        var api = client.get().resources(ResourceClaim.class).inNamespace(ns);
        Set<String> pods = Set.copyOf(podNames);
        for (ResourceClaim c : managed(ns)) {
            try {
                if (KIND_TASK.equals(label(c, LABEL_KIND)) && pods.contains(label(c, LABEL_POD))) {
                    deallocateAndDelete(c);
                } else if (KIND_SHARED.equals(label(c, LABEL_KIND)) && reservedPods(c).stream().anyMatch(pods::contains)) {
                    unreserve(c, pods);
                }
            } catch (KubernetesClientException e) {
                LOG.warnf("claim %s/%s not released (the sweep retries): %s", ns, c.getMetadata().getName(), e.getMessage());
            }
        }
        for (String pod : podNames) { // made after the informer last looked
            ResourceClaim own = api.withName(pod + "-" + REQUEST).get();
            if (own != null && KIND_TASK.equals(label(own, LABEL_KIND))) {
                deallocateAndDelete(own);
            }
        }
    }

    /**
     * Claims whose use is over: a task claim whose gang (label/attempt) is not among {@code placed} or whose
     * pod finished; a shared claim's entries for such pods (the claim goes with its last entry). {@code managed}
     * is what was listed before {@code placed} was read, so a claim made by a launch after that read is never
     * taken for a leftover. {@code pods}: the pods known now, by name. The item: claims changed.
     */
    public int sweep(List<ResourceClaim> managed, Set<String> placed, Map<String, Pod> pods) {
        int changed = 0;
        for (ResourceClaim c : managed) {
            try {
                if (KIND_TASK.equals(label(c, LABEL_KIND))) {
                    String gang = label(c, KubernetesActuator.LABEL_JOB) + "/" + label(c, KubernetesActuator.LABEL_ATTEMPT);
                    if (!placed.contains(gang) || finished(pods.get(label(c, LABEL_POD)))) {
                        LOG.infof("claim %s/%s released: %s", c.getMetadata().getNamespace(), c.getMetadata().getName(),
                                placed.contains(gang) ? "its pod finished" : "its gang is no longer placed");
                        deallocateAndDelete(c);
                        changed++;
                    }
                } else if (KIND_SHARED.equals(label(c, LABEL_KIND))) {
                    Set<String> over = new TreeSet<>();
                    for (String pod : reservedPods(c)) {
                        String gang = gangOf(c, pod);
                        if (gang == null || !placed.contains(gang) || finished(pods.get(pod))) {
                            over.add(pod);
                        }
                    }
                    if (!over.isEmpty() || reservedPods(c).isEmpty()) {
                        unreserve(c, over);
                        changed++;
                    }
                } else if (!madeByGantry(c)) { // a user's claim Gantry allocated: deallocated, never deleted
                    Set<String> over = new TreeSet<>();
                    gangs(c).forEach((pod, gang) -> {
                        if (!placed.contains(gang) || finished(pods.get(pod))) {
                            over.add(pod);
                        }
                    });
                    if (!over.isEmpty()) {
                        LOG.infof("claim %s/%s of pods %s deallocated: their gang is no longer placed or they finished",
                                c.getMetadata().getNamespace(), c.getMetadata().getName(), over);
                        releaseUserClaim(c.getMetadata().getNamespace(), c.getMetadata().getName(), over);
                        changed++;
                    }
                }
            } catch (KubernetesClientException e) {
                LOG.warnf("claim %s/%s not released (next sweep retries): %s", c.getMetadata().getNamespace(), c.getMetadata().getName(),
                        e.getMessage());
            }
        }
        return changed;
    }

    /** The claims Gantry made in {@code ns}, as the informer holds them now. */
    public List<ResourceClaim> managed(String ns) {
        if (claims == null) {
            return List.of();
        }
        return claims.getStore().list().stream().filter(c -> madeByGantry(c) || !gangs(c).isEmpty())
                .filter(c -> ns.equals(c.getMetadata().getNamespace())).toList();
    }

    private void unreserve(ResourceClaim c, Set<String> pods) {
        var api = client.get().resources(ResourceClaim.class).inNamespace(c.getMetadata().getNamespace());
        for (int attempt = 0; ; attempt++) {
            ResourceClaim fresh = api.withName(c.getMetadata().getName()).get();
            if (fresh == null) {
                return;
            }
            List<ResourceClaimConsumerReference> left = new ArrayList<>(fresh.getStatus() == null || fresh.getStatus().getReservedFor() == null
                    ? List.of() : fresh.getStatus().getReservedFor());
            left.removeIf(r -> pods.contains(r.getName()));
            if (left.isEmpty()) {
                deallocateAndDelete(fresh);
                return;
            }
            try {
                ResourceClaimBuilder b = new ResourceClaimBuilder(fresh);
                pods.forEach(p -> b.editMetadata().removeFromAnnotations(GANG_ANNOTATION_PREFIX + p).endMetadata());
                ResourceClaim meta = api.resource(b.build()).update();
                api.resource(new ResourceClaimBuilder(meta).withStatus(new ResourceClaimStatusBuilder(fresh.getStatus())
                        .withReservedFor(left).build()).build()).updateStatus();
                return;
            } catch (KubernetesClientException e) {
                if (e.getCode() != 409 || attempt >= 5) {
                    throw e;
                }
            }
        }
    }

    /** Deallocated first (status cleared, as the resourceclaim controller does for a claim no pod uses), then deleted. */
    private void deallocateAndDelete(ResourceClaim c) {
        var api = client.get().resources(ResourceClaim.class).inNamespace(c.getMetadata().getNamespace());
        try {
            if (c.getStatus() != null && (c.getStatus().getAllocation() != null || c.getStatus().getReservedFor() != null
                    && !c.getStatus().getReservedFor().isEmpty())) {
                ResourceClaim fresh = api.withName(c.getMetadata().getName()).get();
                if (fresh != null) {
                    api.resource(new ResourceClaimBuilder(fresh).withStatus(new ResourceClaimStatus()).build()).updateStatus();
                }
            }
        } catch (KubernetesClientException e) {
            if (e.getCode() != 404 && e.getCode() != 409) {
                throw e;
            }
        }
        api.withName(c.getMetadata().getName()).delete();
    }

    // --- what others hold ---

    @Override
    public List<ScenarioBuilder.Held> held(List<dev.gantry.contracts.nodes.NodeInfo> nodes) {
        if (!enabled || slices == null || claims == null) {
            return List.of();
        }
        Map<String, dev.gantry.contracts.nodes.NodeInfo> view = new java.util.HashMap<>();
        nodes.forEach(n -> view.put(n.name(), n));
        DraDevices devices = devices();
        Map<String, Set<Integer>> byNode = new TreeMap<>();
        Map<String, Map<String, Set<String>>> migsByNode = new TreeMap<>(); // node -> profile -> MIG ids
        for (ResourceClaim c : claims.getStore().list()) {
            if (gantrys(c)) {
                continue;
            }
            for (DraDevices.DeviceRef ref : allocatedDevices(c)) {
                DraDevices.GpuPlace place = devices.place(ref);
                DraDevices.MigRef mig = devices.migOf(ref);
                if (place == null) {
                    continue;
                }
                dev.gantry.contracts.nodes.NodeInfo known = view.get(place.node());
                dev.gantry.contracts.nodes.NodeInfo.MigDevice listed = known == null || known.mig() == null ? null
                        : known.mig().devices().stream().filter(d -> d.id().equals(mig == null ? null : mig.id())).findFirst().orElse(null);
                if (listed != null) {
                    migsByNode.computeIfAbsent(place.node(), k -> new TreeMap<>())
                            .computeIfAbsent(listed.profile(), k -> new TreeSet<>()).add(listed.id());
                } else if (mig != null && known != null && known.mig() != null
                        && known.mig().devices().stream().anyMatch(d -> d.gpu() == place.index())) {
                    // its GPU is in MIG mode in the window's view but this device is not listed yet: the check before a
                    // claim is written (requireNotHeldByOthers) still keeps it from being given out
                    LOG.debugf("MIG device %s on %s held elsewhere is not in the inventory's view yet", mig.id(), place.node());
                } else {
                    byNode.computeIfAbsent(place.node(), k -> new TreeSet<>()).add(place.index());
                }
            }
        }
        List<ScenarioBuilder.Held> held = new ArrayList<>();
        byNode.forEach((node, gpus) -> held.add(new ScenarioBuilder.Held(heldJobId(node), "claims-of-others", node,
                List.copyOf(gpus), null, 0, 0)));
        // one row per MIG profile: a running task holds MIG devices of one profile
        migsByNode.forEach((node, byProfile) -> byProfile.forEach((profile, ids) -> held.add(new ScenarioBuilder.Held(heldJobId(node),
                "claims-of-others-mig-" + profile, node, List.of(), null, 0, 0, profile, List.copyOf(ids)))));
        return held;
    }

    /** The job id under which others' devices on a node are held in a window (no running job has it). */
    public static UUID heldJobId(String node) {
        return UUID.nameUUIDFromBytes(("gantry dra claims of others on " + node).getBytes(java.nio.charset.StandardCharsets.UTF_8));
    }

    // --- reading claims ---

    /**
     * Whether the claim's devices are Gantry's: a claim it made, or a user's claim it allocated (each pod it is reserved for
     * marked with its gang, {@code gang.gantry.dev/<pod>}).
     */
    static boolean gantrys(ResourceClaim c) {
        return madeByGantry(c) || !gangs(c).isEmpty() && gangs(c).keySet().containsAll(reservedPods(c));
    }

    /** The {@code gang.gantry.dev/<pod>} marks of a claim: pod -> {@code <gang label>/<attempt>}. */
    private static Map<String, String> gangs(ResourceClaim c) {
        Map<String, String> out = new TreeMap<>();
        if (c.getMetadata() != null && c.getMetadata().getAnnotations() != null) {
            c.getMetadata().getAnnotations().forEach((k, v) -> {
                if (k.startsWith(GANG_ANNOTATION_PREFIX)) {
                    out.put(k.substring(GANG_ANNOTATION_PREFIX.length()), v);
                }
            });
        }
        return out;
    }

    static boolean madeByGantry(ResourceClaim c) {
        return c.getMetadata() != null && c.getMetadata().getLabels() != null
                && KubernetesActuator.SCHEDULER_NAME.equals(c.getMetadata().getLabels().get(KubernetesActuator.LABEL_MANAGED_BY))
                && c.getMetadata().getLabels().containsKey(LABEL_KIND);
    }

    private List<DraDevices.DeviceRef> allocatedDevices(ResourceClaim c) {
        if (c.getStatus() == null || c.getStatus().getAllocation() == null || c.getStatus().getAllocation().getDevices() == null
                || c.getStatus().getAllocation().getDevices().getResults() == null) {
            return List.of();
        }
        return c.getStatus().getAllocation().getDevices().getResults().stream()
                .filter(r -> driver.equals(r.getDriver()))
                .map(r -> new DraDevices.DeviceRef(r.getDriver(), r.getPool(), r.getDevice())).toList();
    }

    private static List<String> keys(List<DraDevices.DeviceRef> refs) {
        return refs.stream().map(r -> r.pool() + "/" + r.device()).sorted().toList();
    }

    private static boolean reserves(ResourceClaim c, Pod pod) {
        return reservedPods(c).contains(pod.getMetadata().getName());
    }

    private static List<String> reservedPods(ResourceClaim c) {
        return c.getStatus() == null || c.getStatus().getReservedFor() == null ? List.of()
                : c.getStatus().getReservedFor().stream().filter(r -> "pods".equals(r.getResource()))
                        .map(ResourceClaimConsumerReference::getName).filter(Objects::nonNull).toList();
    }

    private static String gangOf(ResourceClaim c, String pod) {
        return c.getMetadata().getAnnotations() == null ? null : c.getMetadata().getAnnotations().get(GANG_ANNOTATION_PREFIX + pod);
    }

    private static String label(ResourceClaim c, String key) {
        return c.getMetadata().getLabels() == null ? null : c.getMetadata().getLabels().get(key);
    }

    private static boolean finished(Pod pod) {
        String phase = pod == null || pod.getStatus() == null ? null : pod.getStatus().getPhase();
        return "Succeeded".equals(phase) || "Failed".equals(phase);
    }
}
