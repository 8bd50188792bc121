package dev.gantry.placement.kubernetes;

import dev.gantry.contracts.jobs.JobQueued;
import dev.gantry.contracts.resources.MigProfile;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Quantity;
import java.math.BigDecimal;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;

/**
 * Pods users created for gantry, read as a gang: which pods are waiting to be placed, and the
 * pending job they make (one task group per distinct resource shape, tasks in pod-name order).
 * Plain functions over fabric8's model, no I/O.
 */
public final class PodGangs {

    /** Annotation on a user's pod: placement may move the gang to defragment (admission: needs gantry.dev/checkpointable). */
    public static final String MIGRATABLE = "gantry.dev/migratable";

    private PodGangs() {
    }

    /** A user gang as a pending job, and which pod each of its tasks is. */
    public record UserGang(JobQueued spec, Map<String, String> podByTask) {
    }

    /**
     * The job id of the pods Gantry made for an API job: their label, the job's id; null when the
     * label is not a UUID (then no API job has pods under it).
     */
    public static UUID apiJobIdOf(String label) {
        try {
            return UUID.fromString(label);
        } catch (IllegalArgumentException e) {
            return null;
        }
    }

    /** A user's pod (not one gantry made) addressed to gantry and not placed yet. */
    public static boolean waitingUserPod(Pod pod) {
        Map<String, String> labels = pod.getMetadata().getLabels() == null ? Map.of() : pod.getMetadata().getLabels();
        return !KubernetesActuator.SCHEDULER_NAME.equals(labels.get(KubernetesActuator.LABEL_MANAGED_BY))
                && labels.containsKey(KubernetesActuator.LABEL_JOB)
                && labels.containsKey(KubernetesActuator.LABEL_MIN_AVAILABLE)
                && pod.getSpec() != null && KubernetesActuator.SCHEDULER_NAME.equals(pod.getSpec().getSchedulerName())
                && pod.getSpec().getNodeName() == null
                && pod.getMetadata().getDeletionTimestamp() == null
                && (pod.getStatus() == null || pod.getStatus().getPhase() == null || "Pending".equals(pod.getStatus().getPhase()));
    }

    /** {@code gantry.dev/min-available}; 0 when missing or not a positive number. */
    public static int minAvailable(List<Pod> pods) {
        for (Pod p : pods) {
            String v = p.getMetadata().getLabels().get(KubernetesActuator.LABEL_MIN_AVAILABLE);
            try {
                return Math.max(0, Integer.parseInt(v.trim()));
            } catch (RuntimeException e) {
                return 0;
            }
        }
        return 0;
    }

    /**
     * The pending job a set of waiting pods makes; {@code submittedAt} null: the oldest pod's creation. {@code claims}: what each
     * pod's own ResourceClaims ask for (DRA; {@link UserClaims.Ask#NONE} when it references none or DRA is off).
     */
    public static UserGang gang(UUID jobId, String label, List<Pod> waiting, Instant submittedAt,
            java.util.function.Function<Pod, UserClaims.Ask> claims) {
        List<Pod> pods = new ArrayList<>(waiting);
        pods.sort(Comparator.comparing(p -> p.getMetadata().getName()));
        Map<String, String> labels = pods.get(0).getMetadata().getLabels();
        // pods of one shape form one task group, in the order the shapes first appear
        Map<Shape, List<Pod>> byShape = new LinkedHashMap<>();
        for (Pod p : pods) {
            byShape.computeIfAbsent(shape(p, claims.apply(p)), k -> new ArrayList<>()).add(p);
        }
        List<JobQueued.TaskGroup> groups = new ArrayList<>();
        Map<String, String> podByTask = new LinkedHashMap<>();
        int g = 0;
        for (Map.Entry<Shape, List<Pod>> e : byShape.entrySet()) {
            String group = "pod" + (byShape.size() == 1 ? "" : String.valueOf(g++));
            Shape shape = e.getKey();
            groups.add(new JobQueued.TaskGroup(group, e.getValue().size(), shape.devices(), null, shape.cpuMillis(), shape.memoryMiB(),
                    null, null, null, null, shape.migProfile()));
            for (int i = 0; i < e.getValue().size(); i++) {
                podByTask.put(group + "-" + i, e.getValue().get(i).getMetadata().getName());
            }
        }
        Instant submitted = submittedAt != null ? submittedAt : pods.stream()
                .map(p -> p.getMetadata().getCreationTimestamp()).filter(Objects::nonNull).map(Instant::parse)
                .min(Comparator.naturalOrder()).orElse(Instant.now());
        int min = Math.min(minAvailable(pods), pods.size());
        List<JobQueued.Toleration> tolerations = new ArrayList<>();
        if (pods.get(0).getSpec().getTolerations() != null) {
            pods.get(0).getSpec().getTolerations().forEach(t -> tolerations.add(new JobQueued.Toleration(t.getKey(), t.getValue())));
        }
        JobQueued spec = new JobQueued(jobId, label, labels.getOrDefault(KubernetesActuator.LABEL_QUEUE, "default"), null,
                intLabel(labels, "gantry.dev/priority", 0), submitted, min, groups, null, null, null, false,
                pods.get(0).getSpec().getNodeSelector() == null ? Map.of() : pods.get(0).getSpec().getNodeSelector(), tolerations,
                !"false".equals(labels.get("gantry.dev/preemptible")), "true".equals(labels.get("gantry.dev/checkpointable")), null, null,
                migratable(pods.get(0)));
        return new UserGang(spec, podByTask);
    }

    /** The annotation {@code gantry.dev/migratable: "true"} on the gang's first pod (admission refuses it without checkpointable). */
    static boolean migratable(Pod pod) {
        Map<String, String> annotations = pod.getMetadata().getAnnotations();
        return annotations != null && "true".equals(annotations.get(MIGRATABLE));
    }

    private static int intLabel(Map<String, String> labels, String key, int fallback) {
        try {
            return labels.containsKey(key) ? Integer.parseInt(labels.get(key).trim()) : fallback;
        } catch (NumberFormatException e) {
            return fallback;
        }
    }

    /** What one pod asks for: whole GPUs, or MIG devices of one profile ({@code migProfile} not null), CPU and memory. */
    record Shape(int devices, String migProfile, long cpuMillis, long memoryMiB) {
    }

    /**
     * The pod's shape. MIG devices are asked for as NVIDIA's device plugin (mixed strategy) names them,
     * {@code nvidia.com/mig-<profile>} limits; they are the pod's devices instead of whole GPUs. A pod asking
     * for what one task group cannot say (MIG devices of two profiles, or MIG devices and whole GPUs, or a
     * {@code nvidia.com/mig-} resource that names no profile) keeps what it asked for in {@code migProfile},
     * which is then no valid profile: admission refuses the gang, saying what was asked, rather than it being
     * placed as something else (as a pod without GPUs, say). With DRA, devices the pod's own claims ask for
     * ({@code claims}, read by {@link UserClaims}) are its devices the same way; a claim Gantry cannot read, or claims
     * beside {@code nvidia.com/gpu} or {@code nvidia.com/mig-} limits, are refused the same way, quoting why.
     */
    static Shape shape(Pod pod, UserClaims.Ask claims) {
        int gpus = gpus(pod);
        java.util.SortedSet<String> migResources = new java.util.TreeSet<>();
        for (Container c : pod.getSpec().getContainers()) {
            if (c.getResources() != null) {
                for (Map<String, Quantity> m : java.util.Arrays.asList(c.getResources().getLimits(), c.getResources().getRequests())) {
                    if (m != null) {
                        m.keySet().stream().filter(r -> r.startsWith(MigProfile.RESOURCE_PREFIX)).forEach(migResources::add);
                    }
                }
            }
        }
        if (claims.refused() || claims.devices() > 0 && (gpus > 0 || !migResources.isEmpty())) {
            String why = claims.refused() ? claims.refusal()
                    : "one pod asks for " + (gpus > 0 ? KubernetesActuator.GPU_RESOURCE : String.join(" and ", migResources)) + " and " + claims.asked();
            return new Shape(1, why, cpuMillis(pod), memoryMiB(pod)); // no valid profile: admission refuses, quoting it
        }
        if (claims.devices() > 0) {
            return new Shape(claims.devices(), claims.migProfile(), cpuMillis(pod), memoryMiB(pod));
        }
        if (migResources.isEmpty()) {
            return new Shape(gpus, null, cpuMillis(pod), memoryMiB(pod));
        }
        String resource = migResources.first();
        String profile = MigProfile.ofResource(resource);
        if (migResources.size() > 1 || gpus > 0 || profile == null) {
            List<String> asked = new ArrayList<>(migResources);
            if (gpus > 0) {
                asked.addFirst(KubernetesActuator.GPU_RESOURCE);
            }
            profile = "one pod asks for " + String.join(" and ", asked); // no valid profile: admission refuses, quoting it
        }
        // an extended resource's request, when given, equals its limit
        return new Shape((int) sum(pod, resource, false, BigDecimal.ONE), profile, cpuMillis(pod), memoryMiB(pod));
    }

    /** Whole GPUs the pod asks for: its containers' {@code nvidia.com/gpu} limits. */
    public static int gpus(Pod pod) {
        return (int) sum(pod, KubernetesActuator.GPU_RESOURCE, true, BigDecimal.ONE);
    }

    static long cpuMillis(Pod pod) {
        return sum(pod, "cpu", false, BigDecimal.valueOf(1000));
    }

    static long memoryMiB(Pod pod) {
        return sum(pod, "memory", false, BigDecimal.ONE.divide(BigDecimal.valueOf(1024L * 1024)));
    }

    private static long sum(Pod pod, String resource, boolean limits, BigDecimal factor) {
        BigDecimal total = BigDecimal.ZERO;
        for (Container c : pod.getSpec().getContainers()) {
            if (c.getResources() == null) {
                continue;
            }
            Map<String, Quantity> m = limits ? c.getResources().getLimits() : c.getResources().getRequests();
            Quantity q = m == null ? null : m.get(resource);
            if (q == null && !limits && c.getResources().getLimits() != null) {
                q = c.getResources().getLimits().get(resource); // requests default to limits
            }
            if (q != null) {
                total = total.add(q.getNumericalAmount().multiply(factor));
            }
        }
        return total.setScale(0, java.math.RoundingMode.CEILING).longValue();
    }
}
