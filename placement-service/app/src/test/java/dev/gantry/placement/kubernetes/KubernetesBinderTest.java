package dev.gantry.placement.kubernetes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.gantry.contracts.events.EventCodec;
import dev.gantry.contracts.events.EventEnvelope;
import dev.gantry.contracts.events.Subjects;
import dev.gantry.contracts.jobs.JobCancelled;
import dev.gantry.contracts.jobs.JobQueued;
import dev.gantry.contracts.jobs.JobRefused;
import dev.gantry.contracts.placements.PodGangFormed;
import dev.gantry.contracts.nodes.NodeChanged;
import dev.gantry.contracts.nodes.NodeInfo;
import dev.gantry.placement.cluster.Leadership;
import dev.gantry.testing.TestDatabase;
import dev.gantry.testing.TestNats;
import io.fabric8.kubernetes.api.model.Binding;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodStatusBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.mockwebserver.http.RecordedRequest;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.quarkus.test.kubernetes.client.KubernetesServer;
import io.quarkus.test.kubernetes.client.KubernetesTestServer;
import io.quarkus.test.kubernetes.client.WithKubernetesTestServer;
import jakarta.inject.Inject;
import java.io.InputStream;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The kubernetes binder against the fabric8 mock server (CRUD mode), with the real PostgreSQL and
 * JetStream: pods created and bound for an API job, completion and failure from pod phases, a
 * user's gang adopted and bound, all-or-none rollback, and the Lease. The mock stores Bindings but
 * does not carry them out, so the test moves pods to their node and phase itself (a separate client
 * with its own user agent, kept apart from the service's requests). After each test every request
 * the service made is checked against the RBAC rules declared in application.properties.
 */
@QuarkusTest
@TestProfile(KubernetesModeProfile.class)
@WithKubernetesTestServer(crud = true)
class KubernetesBinderTest {

    private static final String NS = KubernetesModeProfile.NAMESPACE;
    private static final String MODEL = "K8S-MOCK-GPU";
    private static final NodeInfo.Taint TAINT = new NodeInfo.Taint("gantry.dev/test", "kubernetes", "NoSchedule");
    private static final String TEST_AGENT = "gantry-test-driver";

    @KubernetesTestServer
    KubernetesServer server;

    @ConfigProperty(name = "gantry.nats.url")
    String natsUrl;

    @Inject
    TestDatabase db;

    @Inject
    Leadership leadership;

    @Inject
    LeaderElection election;

    @Inject
    PodWatcher watcher;

    @Inject
    KubernetesActuator actuator;

    @Inject
    PodSigningKey signingKey;

    private KubernetesClient driver;
    private final List<UUID> started = new ArrayList<>();

    private UserGangs gangs;

    /** Admission's part for a user gang ({@link UserGangs#admit}), its job stopped after the test. */
    private UUID admitted(String label) throws Exception {
        UUID jobId = gangs.admit(label);
        started.add(jobId);
        return jobId;
    }

    private static NodeInfo node(String name) {
        return new NodeInfo(name, MODEL, 8, List.of(List.of(0, 1, 2, 3), List.of(4, 5, 6, 7)), List.of(), false,
                128_000, 1_024_000, new NodeInfo.Topology("z1", "s1", "leaf-k"), null, Map.of(), List.of(TAINT), true,
                NodeInfo.Health.READY, 81_920, null, 0, false, Instant.now());
    }

    @BeforeEach
    void setUp() throws Exception {
        gangs = new UserGangs(db, natsUrl, NS);
        driver = new KubernetesClientBuilder().withConfig(new ConfigBuilder(server.getClient().getConfiguration())
                .withUserAgent(TEST_AGENT).build()).build();
        try (TestNats nats = TestNats.connect(natsUrl)) {
            for (String name : List.of("k8s-a", "k8s-b")) {
                nats.publish(EventEnvelope.of(Subjects.NODES_UPSERTED, name, new NodeChanged(System.nanoTime(), node(name))));
            }
        }
        await().atMost(Duration.ofSeconds(20)).until(() ->
                db.queryLong("select count(*) from node where name in ('k8s-a', 'k8s-b') and not removed") == 2);
        await().atMost(Duration.ofSeconds(20)).until(leadership::leading);
    }

    @AfterEach
    void tearDown() throws Exception {
        try (TestNats nats = TestNats.connect(natsUrl)) {
            for (UUID id : started) {
                nats.publish(EventEnvelope.of(Subjects.JOBS_CANCELLED, id.toString(), new JobCancelled(id, "k8s-test", "kim", Instant.now())));
            }
        }
        await().atMost(Duration.ofSeconds(20)).until(() -> started.stream().allMatch(id ->
                db.queryLong("select count(*) from running_job where job_id = ?::uuid", id.toString())
                        + db.queryLong("select count(*) from pending_job where job_id = ?::uuid", id.toString()) == 0));
        started.clear();
        assertEveryServiceRequestIsAllowedByTheRbacRules();
        driver.close();
    }

    private EventEnvelope<JobQueued> apiJob(UUID jobId, List<JobQueued.TaskGroup> groups) {
        return apiJob(jobId, groups, 10, Instant.now(), false);
    }

    private EventEnvelope<JobQueued> apiJob(UUID jobId, List<JobQueued.TaskGroup> groups, int priority, Instant submittedAt,
            boolean checkpointable) {
        started.add(jobId);
        return EventEnvelope.of(Subjects.JOBS_QUEUED, jobId.toString(), spec(jobId, groups, priority, submittedAt, checkpointable));
    }

    private static JobQueued spec(UUID jobId, List<JobQueued.TaskGroup> groups, int priority, Instant submittedAt, boolean checkpointable) {
        return new JobQueued(jobId, "train-" + jobId.toString().substring(0, 6), "k8s-test", "kim", priority, submittedAt, null,
                groups, List.of(MODEL), null, null, false, Map.of(), List.of(new JobQueued.Toleration(TAINT.key(), TAINT.value())),
                true, checkpointable, 600L);
    }

    private boolean launched(UUID jobId) {
        return db.queryLong("select count(*) from cluster_gang where job_id = ?::uuid and launched_at is not null", jobId.toString()) == 1;
    }

    private List<Pod> podsOf(String label, int attempt) {
        return podsOf(label).stream()
                .filter(p -> String.valueOf(attempt).equals(p.getMetadata().getLabels().get(KubernetesActuator.LABEL_ATTEMPT))).toList();
    }

    private List<Pod> podsOf(String label) {
        return driver.pods().inNamespace(NS).withLabel(KubernetesActuator.LABEL_JOB, label).list().getItems();
    }

    private long outbox(String subject, UUID jobId) {
        return db.queryLong("select count(*) from outbox_event where subject = ? and subject_id = ?", subject, jobId.toString());
    }

    private long bindingPosts() throws InterruptedException {
        return requests().stream()
                .filter(r -> r.getMethod().equals("POST") && r.getPath().equals("/api/v1/namespaces/" + NS + "/bindings")).count();
    }

    /** What the kubelet would do: the pod runs on its node and reaches {@code phase}. */
    private void runTo(Pod pod, String phase) {
        String node = db.queryString("select node from allocation a where a.job_id = ?::uuid and a.task = ?",
                pod.getMetadata().getLabels().get(KubernetesActuator.LABEL_JOB), pod.getMetadata().getLabels().get(KubernetesActuator.LABEL_TASK));
        Pod moved = new PodBuilder(pod).editSpec().withNodeName(node).endSpec()
                .withStatus(new PodStatusBuilder().withPhase(phase).withReason("Failed".equals(phase) ? "OOMKilled" : null).build()).build();
        driver.pods().inNamespace(NS).resource(moved).update();
    }

    @Test
    void anApiJobGetsItsPodsCreatedAndBoundAndCompletesWhenTheyAllSucceed() throws Exception {
        UUID jobId = UUID.randomUUID();
        long bindingsBefore = bindingPosts();
        try (TestNats nats = TestNats.connect(natsUrl)) {
            nats.publish(apiJob(jobId, List.of(new JobQueued.TaskGroup("worker", 2, 4, null, 8000, 32000, "ghcr.io/acme/train:1.4",
                    List.of("python", "train.py", "--epochs=3")))));
        }
        await().atMost(Duration.ofSeconds(30)).until(() -> podsOf(jobId.toString()).size() == 2
                && outbox(Subjects.PLACEMENTS_BOUND, jobId) == 1);
        List<Pod> pods = podsOf(jobId.toString());
        for (Pod pod : pods) {
            assertThat(pod.getSpec().getSchedulerName()).isEqualTo("gantry");
            assertThat(pod.getSpec().getContainers()).singleElement().satisfies(c -> {
                assertThat(c.getImage()).isEqualTo("ghcr.io/acme/train:1.4");
                assertThat(c.getCommand()).containsExactly("python", "train.py", "--epochs=3");
                assertThat(c.getResources().getLimits()).containsEntry("nvidia.com/gpu", new Quantity("4"));
            });
            assertThat(pod.getMetadata().getLabels()).containsEntry("gantry.dev/job", jobId.toString())
                    .containsEntry("gantry.dev/queue", "k8s-test");
            // hardened by default: no API token, Pod Security "restricted"
            assertThat(pod.getSpec().getAutomountServiceAccountToken()).isFalse();
            assertThat(pod.getSpec().getContainers().getFirst().getSecurityContext()).satisfies(sc -> {
                assertThat(sc.getRunAsNonRoot()).isTrue();
                assertThat(sc.getAllowPrivilegeEscalation()).isFalse();
                assertThat(sc.getCapabilities().getDrop()).containsExactly("ALL");
                assertThat(sc.getSeccompProfile().getType()).isEqualTo("RuntimeDefault");
            });
            String task = pod.getMetadata().getLabels().get(KubernetesActuator.LABEL_TASK);
            String indices = db.queryString("select array_to_string(gpu_indices, ',') from allocation where job_id = ?::uuid and task = ?",
                    jobId.toString(), task);
            assertThat(pod.getMetadata().getAnnotations()).containsEntry("gantry.dev/gpu-indices", indices);
            assertThat(indices.split(",")).hasSize(4);
        }
        // one Binding per pod, to the node of its allocation (the CRUD mock keeps them; a real API server carries them out)
        await().atMost(Duration.ofSeconds(10)).until(() -> pods.stream()
                .allMatch(p -> driver.bindings().inNamespace(NS).withName(p.getMetadata().getName()).get() != null));
        assertThat(bindingPosts()).as("one per pod (other tests of the class bound pods before)").isEqualTo(bindingsBefore + 2);
        for (Pod pod : pods) {
            String task = pod.getMetadata().getLabels().get(KubernetesActuator.LABEL_TASK);
            String node = db.queryString("select node from allocation where job_id = ?::uuid and task = ?", jobId.toString(), task);
            Binding binding = driver.bindings().inNamespace(NS).withName(pod.getMetadata().getName()).get();
            assertThat(binding.getTarget().getKind()).isEqualTo("Node");
            assertThat(binding.getTarget().getName()).isEqualTo(node);
        }

        runTo(pods.get(0), "Succeeded");
        Thread.sleep(1500);
        assertThat(outbox(Subjects.PLACEMENTS_COMPLETED, jobId)).as("one pod done is not the job done").isZero();
        runTo(pods.get(1), "Succeeded");
        await().atMost(Duration.ofSeconds(20)).until(() -> outbox(Subjects.PLACEMENTS_COMPLETED, jobId) == 1);
        assertThat(db.queryLong("select count(*) from allocation where job_id = ?::uuid", jobId.toString())).isZero();
    }

    @Test
    void aMigTaskAsksTheDevicePluginForItsProfilesResourceInDevicePluginMode() throws Exception {
        // as the inventory lays out the device plugin's mixed-strategy counts: GPU 0 in MIG mode, seven 1g.10gb devices
        String migNode = "k8s-mig";
        List<NodeInfo.MigDevice> devices = new ArrayList<>();
        for (int n = 0; n < 7; n++) {
            devices.add(new NodeInfo.MigDevice("mig-1g.10gb-" + n, 0, "1g.10gb", null));
        }
        NodeInfo node = new NodeInfo(migNode, MODEL, 1, List.of(), List.of(), false, 64_000, 512_000,
                new NodeInfo.Topology("z1", "s1", "leaf-m"), null, Map.of(), List.of(TAINT), true, NodeInfo.Health.READY, 81_920,
                new NodeInfo.Mig("mixed", Map.of("1g.10gb", 7), devices), 0, false, Instant.now());
        try (TestNats nats = TestNats.connect(natsUrl)) {
            nats.publish(EventEnvelope.of(Subjects.NODES_UPSERTED, migNode, new NodeChanged(System.nanoTime(), node)));
        }
        try {
            await().atMost(Duration.ofSeconds(20)).until(() -> db.queryLong("select count(*) from node where name = ? and not removed", migNode) == 1);
            UUID jobId = UUID.randomUUID();
            try (TestNats nats = TestNats.connect(natsUrl)) {
                nats.publish(apiJob(jobId, List.of(new JobQueued.TaskGroup("nb", 1, 2, null, 1000, 4000, "jupyter:4", null, null, null,
                        "1g.10gb"))));
            }
            await().atMost(Duration.ofSeconds(30)).until(() -> podsOf(jobId.toString()).size() == 1 && launched(jobId));
            Pod pod = podsOf(jobId.toString()).getFirst();
            assertThat(pod.getSpec().getContainers().getFirst().getResources().getLimits())
                    .containsEntry("nvidia.com/mig-1g.10gb", new Quantity("2")).doesNotContainKey("nvidia.com/gpu");
            String chosen = db.queryString("select array_to_string(mig_devices, ',') from allocation where job_id = ?::uuid", jobId.toString());
            assertThat(chosen.split(",")).hasSize(2).allSatisfy(id -> assertThat(id).startsWith("mig-1g.10gb-"));
            assertThat(pod.getMetadata().getAnnotations()).containsEntry(KubernetesActuator.ANNOTATION_MIG_DEVICES, chosen)
                    .containsEntry(KubernetesActuator.ANNOTATION_GPU_INDICES, "");
            assertThat(driver.bindings().inNamespace(NS).withName(pod.getMetadata().getName()).get().getTarget().getName()).isEqualTo(migNode);
        } finally {
            try (TestNats nats = TestNats.connect(natsUrl)) {
                nats.publish(EventEnvelope.of(Subjects.NODES_REMOVED, migNode, new dev.gantry.contracts.nodes.NodeRemoved(System.nanoTime(), migNode)));
            }
        }
    }

    @Test
    void aFailedPodFailsTheJobAndItsPodsGo() throws Exception {
        UUID jobId = UUID.randomUUID();
        try (TestNats nats = TestNats.connect(natsUrl)) {
            nats.publish(apiJob(jobId, List.of(new JobQueued.TaskGroup("worker", 2, 2, null, 1000, 1000, "busybox", null))));
        }
        // the previous test's gang may still hold the GPUs until its cancellation is processed (seen: ~30 s in CI)
        await().atMost(Duration.ofSeconds(90)).until(() -> podsOf(jobId.toString()).size() == 2
                && outbox(Subjects.PLACEMENTS_BOUND, jobId) == 1);
        runTo(podsOf(jobId.toString()).get(0), "Failed");
        await().atMost(Duration.ofSeconds(20)).until(() -> outbox(Subjects.PLACEMENTS_FAILED, jobId) == 1);
        assertThat(db.queryString("select envelope from outbox_event where subject = ? and subject_id = ?", Subjects.PLACEMENTS_FAILED,
                jobId.toString())).contains("OOMKilled");
        assertThat(db.queryLong("select count(*) from allocation where job_id = ?::uuid", jobId.toString())).isZero();
        assertThat(db.queryLong("select count(*) from pending_job where job_id = ?::uuid", jobId.toString())).as("not requeued").isZero();
        await().atMost(Duration.ofSeconds(10)).until(() -> podsOf(jobId.toString()).isEmpty());
    }

    @Test
    void aGangIsAllOrNothingWhenOnePodCannotBeMade() throws Exception {
        UUID jobId = UUID.randomUUID();
        try (TestNats nats = TestNats.connect(natsUrl)) {
            // the ps group can run, the worker group has no image: its pod can never be made
            nats.publish(apiJob(jobId, List.of(new JobQueued.TaskGroup("ps", 1, 0, null, 1000, 1000, "tf:2", null),
                    new JobQueued.TaskGroup("worker", 1, 2, null, 1000, 1000, null, null))));
        }
        await().atMost(Duration.ofSeconds(30)).until(() -> outbox(Subjects.PLACEMENTS_FAILED, jobId) == 1);
        assertThat(outbox(Subjects.PLACEMENTS_BOUND, jobId)).isEqualTo(1); // recorded first, then undone
        assertThat(podsOf(jobId.toString())).as("the ps pod made before the failure is deleted again").isEmpty();
        assertThat(requests()).anyMatch(r -> r.getMethod().equals("POST") && r.getPath().equals("/api/v1/namespaces/" + NS + "/pods"));
        assertThat(db.queryLong("select count(*) from allocation where job_id = ?::uuid", jobId.toString())).isZero();
    }

    /** Pod {@code i} of a two-pod gang as a user's operator makes it: scheduler gantry, gang labels, GPU limits. */
    private static Pod userPod(String label, int i, int gpus) {
        return new PodBuilder().withNewMetadata().withName(label + "-" + i).withNamespace(NS)
                .addToLabels("gantry.dev/job", label).addToLabels("gantry.dev/min-available", "2").addToLabels("gantry.dev/queue", "k8s-test")
                .endMetadata()
                .withNewSpec().withSchedulerName("gantry")
                .addNewToleration().withKey(TAINT.key()).withValue(TAINT.value()).withEffect("NoSchedule").endToleration()
                .addNewContainer().withName("main").withImage("pytorch:2").withNewResources()
                .addToLimits("nvidia.com/gpu", new Quantity(Integer.toString(gpus))).endResources().endContainer()
                .endSpec().build();
    }

    private long gangsFormed(String label) {
        return db.queryLong("select count(*) from outbox_event where subject = ? and envelope like ?", Subjects.PLACEMENTS_GANG_FORMED,
                "%\"gang\":\"" + label + "\"%");
    }

    @Test
    void podsAUserCreatedFormAGangThatIsBoundOnceAdmissionQueuesIt() throws Exception {
        String label = "user-gang-" + UUID.randomUUID().toString().substring(0, 6);
        driver.pods().inNamespace(NS).resource(userPod(label, 0, 8)).create();
        // one pod of two is not yet a gang
        await().during(Duration.ofSeconds(2)).atMost(Duration.ofSeconds(4)).until(() -> gangs.jobId(label) == null && gangsFormed(label) == 0);
        driver.pods().inNamespace(NS).resource(userPod(label, 1, 8)).create();

        PodGangFormed gang = gangs.formed(label);
        UUID jobId = gang.jobId();
        assertThat(gang.namespace()).isEqualTo(NS);
        assertThat(gang.spec().totalGpus()).isEqualTo(16);
        assertThat(jobId).as("the job id is not derived from the label").isNotEqualTo(PodGangs.apiJobIdOf(label));
        // admission has not queued it: not planned, nothing bound, however long it waits
        long postsBefore = bindingPosts();
        await().during(Duration.ofSeconds(3)).atMost(Duration.ofSeconds(5)).until(() ->
                db.queryLong("select count(*) from pending_job where job_id = ?::uuid", jobId.toString()) == 0
                        && db.queryLong("select count(*) from allocation where job_id = ?::uuid", jobId.toString()) == 0);
        assertThat(bindingPosts()).isEqualTo(postsBefore);
        assertThat(gangsFormed(label)).as("asked once").isEqualTo(1);

        admitted(label);
        await().atMost(Duration.ofSeconds(30)).until(() -> outbox(Subjects.PLACEMENTS_BOUND, jobId) == 1);
        assertThat(db.queryLong("select count(*) from allocation where job_id = ?::uuid", jobId.toString())).isEqualTo(2);
        assertThat(db.queryString("select string_agg(distinct node, ',' order by node) from allocation where job_id = ?::uuid",
                jobId.toString())).isEqualTo("k8s-a,k8s-b");
        // the allocation is recorded first, then the pods are bound
        await().atMost(Duration.ofSeconds(10)).until(() -> driver.bindings().inNamespace(NS).withName(label + "-1").get() != null);
        for (int i = 0; i < 2; i++) { // the existing pods are bound, with their GPU indices on the Binding
            Binding binding = driver.bindings().inNamespace(NS).withName(label + "-" + i).get();
            assertThat(binding).isNotNull();
            String node = binding.getTarget().getName();
            assertThat(node).isIn("k8s-a", "k8s-b");
            assertThat(binding.getMetadata().getAnnotations().get("gantry.dev/gpu-indices")).isEqualTo("0,1,2,3,4,5,6,7");
        }
        assertThat(podsOf(label)).as("no pods made for a user's gang").hasSize(2);

        for (Pod pod : podsOf(label)) { // users' pods are their own: they complete through their phases
            Pod moved = new PodBuilder(pod).editSpec().withNodeName("k8s-a").endSpec()
                    .withStatus(new PodStatusBuilder().withPhase("Succeeded").build()).build();
            driver.pods().inNamespace(NS).resource(moved).update();
        }
        await().atMost(Duration.ofSeconds(20)).until(() -> outbox(Subjects.PLACEMENTS_COMPLETED, jobId) == 1);
    }

    /** A node whose one GPU is in MIG mode, cut (device plugin, mixed strategy) into {@code n} devices of {@code profile}. */
    private static NodeInfo migNode(String name, String profile, int n) {
        List<NodeInfo.MigDevice> devices = new ArrayList<>();
        for (int d = 0; d < n; d++) {
            devices.add(new NodeInfo.MigDevice(name + "-mig-" + profile + "-" + d, 0, profile, null));
        }
        return new NodeInfo(name, MODEL, 1, List.of(), List.of(), false, 64_000, 512_000,
                new NodeInfo.Topology("z1", "s1", "leaf-m"), null, Map.of(), List.of(TAINT), true, NodeInfo.Health.READY, 81_920,
                new NodeInfo.Mig("mixed", Map.of(profile, n), devices), 0, false, Instant.now());
    }

    /** A user's pod asking NVIDIA's device plugin for MIG devices: {@code resource: count}, e.g. nvidia.com/mig-1g.10gb: 1. */
    private static Pod userMigPod(String label, int i, int minAvailable, Map<String, String> gpuLimits) {
        PodBuilder pod = new PodBuilder().withNewMetadata().withName(label + "-" + i).withNamespace(NS)
                .addToLabels("gantry.dev/job", label).addToLabels("gantry.dev/min-available", String.valueOf(minAvailable))
                .addToLabels("gantry.dev/queue", "k8s-test")
                .endMetadata()
                .withNewSpec().withSchedulerName("gantry")
                .addNewToleration().withKey(TAINT.key()).withValue(TAINT.value()).withEffect("NoSchedule").endToleration()
                .addNewContainer().withName("main").withImage("pytorch:2").withNewResources()
                .addToRequests("cpu", new Quantity("500m")).endResources().endContainer()
                .endSpec();
        gpuLimits.forEach((resource, count) -> pod.editSpec().editFirstContainer().editResources()
                .addToLimits(resource, new Quantity(count)).endResources().endContainer().endSpec());
        return pod.build();
    }

    @Test
    void aUsersPodAskingForMigDevicesIsBoundToAFreeDeviceOfItsProfileAndNeverElsewhere() throws Exception {
        String tag = UUID.randomUUID().toString().substring(0, 6);
        String small = "k8s-mig-1g-" + tag; // two 1g.10gb devices
        String big = "k8s-mig-3g-" + tag; // two 3g.40gb devices: free, but not of the profile asked for
        try (TestNats nats = TestNats.connect(natsUrl)) {
            nats.publish(EventEnvelope.of(Subjects.NODES_UPSERTED, small, new NodeChanged(System.nanoTime(), migNode(small, "1g.10gb", 2))));
            nats.publish(EventEnvelope.of(Subjects.NODES_UPSERTED, big, new NodeChanged(System.nanoTime(), migNode(big, "3g.40gb", 2))));
        }
        try {
            await().atMost(Duration.ofSeconds(20)).until(() -> db.queryLong("select count(*) from node where name in (?, ?) and not removed",
                    small, big) == 2);
            String label = "user-mig-" + tag;
            for (int i = 0; i < 2; i++) {
                driver.pods().inNamespace(NS).resource(userMigPod(label, i, 2, Map.of("nvidia.com/mig-1g.10gb", "1"))).create();
            }
            PodGangFormed formed = gangs.formed(label);
            assertThat(formed.spec().taskGroups()).singleElement().satisfies(g -> {
                assertThat(g.migProfile()).isEqualTo("1g.10gb");
                assertThat(g.gpusPerReplica()).as("MIG devices per pod").isEqualTo(1);
                assertThat(g.replicas()).isEqualTo(2);
            });
            UUID jobId = admitted(label);
            await().atMost(Duration.ofSeconds(30)).until(() -> outbox(Subjects.PLACEMENTS_BOUND, jobId) == 1 && launched(jobId));
            assertThat(db.queryString("select string_agg(distinct node, ',') from allocation where job_id = ?::uuid", jobId.toString()))
                    .as("the only node with devices of the profile").isEqualTo(small);
            assertThat(db.queryLong("select count(*) from allocation where job_id = ?::uuid and mig_profile = '1g.10gb' "
                    + "and cardinality(mig_devices) = 1 and cardinality(gpu_indices) = 0", jobId.toString())).isEqualTo(2);
            for (int i = 0; i < 2; i++) { // each pod's Binding names its node and carries the device Gantry chose for it
                String task = db.queryString("select task from allocation where job_id = ?::uuid and task = ?", jobId.toString(), "pod-" + i);
                String device = db.queryString("select array_to_string(mig_devices, ',') from allocation where job_id = ?::uuid and task = ?",
                        jobId.toString(), task);
                Binding binding = driver.bindings().inNamespace(NS).withName(label + "-" + i).get();
                assertThat(binding.getTarget().getName()).isEqualTo(small);
                assertThat(binding.getMetadata().getAnnotations()).containsEntry(KubernetesActuator.ANNOTATION_MIG_DEVICES, device);
                assertThat(device).startsWith(small + "-mig-1g.10gb-");
            }
            assertThat(db.queryLong("select count(distinct d) from allocation, unnest(mig_devices) d where job_id = ?::uuid",
                    jobId.toString())).as("two devices, not one twice").isEqualTo(2);

            // the node's 1g.10gb devices are taken: one more such pod waits, though whole GPUs and 3g.40gb devices are free
            String late = "user-mig-late-" + tag;
            driver.pods().inNamespace(NS).resource(userMigPod(late, 0, 1, Map.of("nvidia.com/mig-1g.10gb", "1"))).create();
            UUID lateId = admitted(late);
            await().atMost(Duration.ofSeconds(20)).until(() ->
                    db.queryLong("select count(*) from pending_job where job_id = ?::uuid", lateId.toString()) == 1);
            await().during(Duration.ofSeconds(4)).atMost(Duration.ofSeconds(6)).until(() ->
                    db.queryLong("select count(*) from allocation where job_id = ?::uuid", lateId.toString()) == 0);
            assertThat(driver.bindings().inNamespace(NS).withName(late + "-0").get()).isNull();

            for (Pod pod : podsOf(label)) { // the first gang ends: its devices go back, and the waiting pod gets one
                driver.pods().inNamespace(NS).resource(new PodBuilder(pod).editSpec().withNodeName(small).endSpec()
                        .withStatus(new PodStatusBuilder().withPhase("Succeeded").build()).build()).update();
            }
            await().atMost(Duration.ofSeconds(30)).until(() -> outbox(Subjects.PLACEMENTS_BOUND, lateId) == 1 && launched(lateId));
            assertThat(db.queryString("select node from allocation where job_id = ?::uuid", lateId.toString())).isEqualTo(small);
            assertThat(driver.bindings().inNamespace(NS).withName(late + "-0").get().getMetadata().getAnnotations())
                    .containsKey(KubernetesActuator.ANNOTATION_MIG_DEVICES);
        } finally {
            try (TestNats nats = TestNats.connect(natsUrl)) {
                for (String n : List.of(small, big)) {
                    nats.publish(EventEnvelope.of(Subjects.NODES_REMOVED, n, new dev.gantry.contracts.nodes.NodeRemoved(System.nanoTime(), n)));
                }
            }
        }
    }

    @Test
    void aUsersPodAskingForWholeGpusAndMigDevicesIsRefusedNotPlacedAsSomethingElse() throws Exception {
        String label = "user-mixed-" + UUID.randomUUID().toString().substring(0, 6);
        driver.pods().inNamespace(NS).resource(userMigPod(label, 0, 1,
                Map.of("nvidia.com/gpu", "1", "nvidia.com/mig-1g.10gb", "1"))).create();
        JobQueued.TaskGroup group = gangs.formed(label).spec().taskGroups().getFirst();
        assertThat(group.migProfile()).as("what was asked, which admission refuses as no MIG profile")
                .contains("nvidia.com/gpu").contains("nvidia.com/mig-1g.10gb");
        assertThat(dev.gantry.contracts.resources.MigProfile.valid(group.migProfile())).isFalse();
    }

    @Test
    void aCheckpointableVictimIsEvictedWithItsGracePeriodThenRequeued() throws Exception {
        UUID victim = UUID.randomUUID();
        UUID preemptor = UUID.randomUUID();
        Instant submitted = Instant.now().minusSeconds(3600).truncatedTo(java.time.temporal.ChronoUnit.MILLIS);
        JobQueued.TaskGroup wholeCluster = new JobQueued.TaskGroup("worker", 2, 8, null, 1000, 1000, "trainer:3", null);
        try (TestNats nats = TestNats.connect(natsUrl)) {
            nats.publish(apiJob(victim, List.of(wholeCluster), 0, submitted, true));
        }
        await().atMost(Duration.ofSeconds(30)).until(() -> podsOf(victim.toString()).size() == 2
                && outbox(Subjects.PLACEMENTS_BOUND, victim) == 1);
        List<String> victimPods = podsOf(victim.toString()).stream().map(p -> p.getMetadata().getName()).toList();
        try (TestNats nats = TestNats.connect(natsUrl)) {
            nats.publish(apiJob(preemptor, List.of(wholeCluster), 1000, Instant.now(), false));
        }
        await().atMost(Duration.ofSeconds(30)).until(() -> outbox(Subjects.PLACEMENTS_PREEMPTED, victim) == 1);
        // told first: its pods get the eviction with the grace period, its GPUs stay held meanwhile
        await().atMost(Duration.ofSeconds(10)).until(() -> {
            List<RecordedRequest> seen = requests();
            return victimPods.stream().allMatch(name -> seen.stream().anyMatch(r ->
                    r.getMethod().equals("POST") && r.getPath().equals("/api/v1/namespaces/" + NS + "/pods/" + name + "/eviction")));
        });
        // grace (1 s) over: the victim's pods are gone, it is pending with its submission time, the preemptor runs
        await().atMost(Duration.ofSeconds(30)).until(() -> podsOf(preemptor.toString()).size() == 2
                && outbox(Subjects.PLACEMENTS_BOUND, preemptor) == 1);
        assertThat(podsOf(victim.toString())).isEmpty();
        assertThat(db.queryLong("select (extract(epoch from submitted_at) * 1000)::bigint from pending_job where job_id = ?::uuid",
                victim.toString())).isEqualTo(submitted.toEpochMilli());
        assertThat(db.queryLong("select count(*) from allocation where job_id = ?::uuid", victim.toString())).isZero();
    }

    @Test
    void aPlacementRecordedButNeverLaunchedIsLaunchedOnTheSweepOnItsOwnGpus() throws Exception {
        UUID jobId = UUID.randomUUID();
        started.add(jobId);
        JobQueued job = spec(jobId, List.of(new JobQueued.TaskGroup("worker", 2, 4, null, 1000, 1000, "trainer:5", null)), 10,
                Instant.now().minusSeconds(600), false);
        await().atMost(Duration.ofSeconds(30)).until(() ->
                db.queryLong("select count(*) from allocation where node in ('k8s-a', 'k8s-b')") == 0);
        // the service stopped after recording the placement and making the first pod, before binding it:
        // the pod as the actuator makes it, unbound, and the rows the binder writes, launched_at still null
        String first = KubernetesActuator.podName(jobId, job.name(), "worker-0", 1);
        String second = KubernetesActuator.podName(jobId, job.name(), "worker-1", 1);
        Pod made = driver.pods().inNamespace(NS).resource(new PodBuilder()
                .withNewMetadata().withName(first).withNamespace(NS)
                .addToLabels(KubernetesActuator.LABEL_JOB, jobId.toString()).addToLabels(KubernetesActuator.LABEL_TASK, "worker-0")
                .addToLabels(KubernetesActuator.LABEL_ATTEMPT, "1").addToLabels(KubernetesActuator.LABEL_MANAGED_BY, "gantry")
                .addToAnnotations(KubernetesActuator.ANNOTATION_GPU_INDICES, "0,1,2,3")
                .addToAnnotations(PodProvenance.ANNOTATION, signingKey.provenance().sign(NS, first, jobId.toString(), 1))
                .endMetadata()
                .withNewSpec().withSchedulerName("gantry").withRestartPolicy("Never")
                .addNewContainer().withName("worker").withImage("trainer:5").withNewResources()
                .addToLimits("nvidia.com/gpu", new Quantity("4")).endResources().endContainer()
                .endSpec().build()).create();
        db.execute("""
                with running as (
                    insert into running_job (job_id, queue, priority, spec, submitted_at, bound_at, due_at)
                    values (?::uuid, 'k8s-test', 10, ?, now() - interval '10 minutes', now() - interval '1 minute', '9999-12-31')),
                allocated as (
                    insert into allocation (job_id, task, node, gpu_indices, allocated_at, cpu_millis, memory_mib)
                    values (?::uuid, 'worker-0', 'k8s-a', '{0,1,2,3}', now() - interval '1 minute', 1000, 1000),
                           (?::uuid, 'worker-1', 'k8s-b', '{0,1,2,3}', now() - interval '1 minute', 1000, 1000))
                insert into cluster_gang (job_id, namespace, gang_label, user_pods, pods, attempt, created_at, launched_at)
                values (?::uuid, ?, ?, false, '{}', 1, now() - interval '1 minute', null)
                """, jobId.toString(), EventCodec.toJson(job), jobId.toString(), jobId.toString(),
                jobId.toString(), NS, jobId.toString());
        String allocationsBefore = db.queryString(
                "select string_agg(id || ':' || node || ':' || array_to_string(gpu_indices, ','), ' ' order by id) from allocation where job_id = ?::uuid",
                jobId.toString());

        watcher.sweepSoon(); // what a restart, gaining the Lease, or the informer's resync does
        await().atMost(Duration.ofSeconds(20)).until(() -> launched(jobId)
                && driver.bindings().inNamespace(NS).withName(first).get() != null
                && driver.bindings().inNamespace(NS).withName(second).get() != null);
        assertThat(podsOf(jobId.toString())).extracting(p -> p.getMetadata().getName()).containsExactlyInAnyOrder(first, second);
        assertThat(driver.pods().inNamespace(NS).withName(first).get().getMetadata().getUid())
                .as("the pod made before the restart is reused, not made again").isEqualTo(made.getMetadata().getUid());
        assertThat(driver.bindings().inNamespace(NS).withName(first).get().getTarget().getName()).isEqualTo("k8s-a");
        assertThat(driver.bindings().inNamespace(NS).withName(second).get().getTarget().getName()).isEqualTo("k8s-b");
        assertThat(driver.pods().inNamespace(NS).withName(second).get().getMetadata().getAnnotations())
                .containsEntry(KubernetesActuator.ANNOTATION_GPU_INDICES, "0,1,2,3");
        assertThat(db.queryString(
                "select string_agg(id || ':' || node || ':' || array_to_string(gpu_indices, ','), ' ' order by id) from allocation where job_id = ?::uuid",
                jobId.toString())).as("launched on the recorded GPUs, nothing booked again").isEqualTo(allocationsBefore);
        assertThat(outbox(Subjects.PLACEMENTS_FAILED, jobId)).isZero();

        // the GPUs it holds are not given to anyone else: a second job gets the other half of each node
        UUID other = UUID.randomUUID();
        try (TestNats nats = TestNats.connect(natsUrl)) {
            nats.publish(apiJob(other, List.of(new JobQueued.TaskGroup("worker", 2, 4, null, 1000, 1000, "trainer:5", null))));
        }
        await().atMost(Duration.ofSeconds(30)).until(() -> podsOf(other.toString()).size() == 2 && launched(other));
        assertThat(db.queryLong("""
                select count(*) from allocation a join allocation b
                  on a.node = b.node and a.job_id < b.job_id and a.gpu_indices && b.gpu_indices
                 where a.node in ('k8s-a', 'k8s-b')""")).as("no GPU booked twice").isZero();
        assertThat(db.queryLong("select count(*) from allocation where job_id in (?::uuid, ?::uuid)", jobId.toString(), other.toString()))
                .isEqualTo(4);
    }

    @Test
    void aPodDeletedOutsideGantryRequeuesItsJobWithItsSubmissionTime() throws Exception {
        UUID jobId = UUID.randomUUID();
        Instant submitted = Instant.now().minusSeconds(3600).truncatedTo(java.time.temporal.ChronoUnit.MILLIS);
        try (TestNats nats = TestNats.connect(natsUrl)) {
            nats.publish(apiJob(jobId, List.of(new JobQueued.TaskGroup("worker", 2, 2, null, 1000, 1000, "busybox", null)), 10,
                    submitted, false));
        }
        await().atMost(Duration.ofSeconds(60)).until(() -> podsOf(jobId.toString()).size() == 2 && launched(jobId));
        List<String> attempt1 = podsOf(jobId.toString(), 1).stream().map(p -> p.getMetadata().getName()).toList();
        assertThat(attempt1).hasSize(2);

        driver.pods().inNamespace(NS).withName(attempt1.get(0)).delete(); // kubectl delete pod

        await().atMost(Duration.ofSeconds(20)).until(() -> outbox(Subjects.PLACEMENTS_REQUEUED, jobId) == 1);
        assertThat(db.queryString("select envelope from outbox_event where subject = ? and subject_id = ?", Subjects.PLACEMENTS_REQUEUED,
                jobId.toString())).contains("pod " + attempt1.get(0) + " was deleted outside Gantry");
        // back in line with its submission time (pending, or already placed again from there: the window is quick)
        assertThat(db.queryLong("""
                select (extract(epoch from submitted_at) * 1000)::bigint from (
                  select submitted_at from pending_job where job_id = ?::uuid
                  union all select submitted_at from running_job where job_id = ?::uuid) j""", jobId.toString(), jobId.toString()))
                .isEqualTo(submitted.toEpochMilli());
        await().atMost(Duration.ofSeconds(10)).until(() -> podsOf(jobId.toString(), 1).isEmpty()); // its other pod went too
        // placed again from the pending set: a new attempt, new pods
        await().atMost(Duration.ofSeconds(30)).until(() -> outbox(Subjects.PLACEMENTS_BOUND, jobId) == 2
                && podsOf(jobId.toString(), 2).size() == 2 && launched(jobId));

        // the same deletion seen again (a sweep looks at every running gang) changes nothing
        watcher.sweepSoon();
        Thread.sleep(3000);
        assertThat(outbox(Subjects.PLACEMENTS_REQUEUED, jobId)).isEqualTo(1);
        assertThat(outbox(Subjects.PLACEMENTS_FAILED, jobId)).as("requeued is not failed").isZero();
        assertThat(podsOf(jobId.toString(), 2)).hasSize(2);
        assertThat(db.queryLong("select count(*) from running_job where job_id = ?::uuid", jobId.toString())).isEqualTo(1);
    }

    @Test
    void podsGantryDeletesItselfAreNotTakenForAnOutsideDeletion() throws Exception {
        UUID jobId = UUID.randomUUID();
        try (TestNats nats = TestNats.connect(natsUrl)) {
            nats.publish(apiJob(jobId, List.of(new JobQueued.TaskGroup("worker", 2, 2, null, 1000, 1000, "busybox", null))));
        }
        await().atMost(Duration.ofSeconds(60)).until(() -> podsOf(jobId.toString()).size() == 2 && launched(jobId));
        List<String> pods = podsOf(jobId.toString()).stream().map(p -> p.getMetadata().getName()).toList();
        try (TestNats nats = TestNats.connect(natsUrl)) {
            nats.publish(EventEnvelope.of(Subjects.JOBS_CANCELLED, jobId.toString(), new JobCancelled(jobId, "k8s-test", "kim", Instant.now())));
        }
        await().atMost(Duration.ofSeconds(20)).until(() -> outbox(Subjects.PLACEMENTS_COMPLETED, jobId) == 1 && podsOf(jobId.toString()).isEmpty());
        assertThat(pods).allMatch(name -> actuator.deletedByGantry(NS, name));
        watcher.sweepSoon();
        Thread.sleep(2500);
        assertThat(outbox(Subjects.PLACEMENTS_FAILED, jobId)).as("a cancellation is not a lost pod").isZero();
        assertThat(db.queryLong("select count(*) from pending_job where job_id = ?::uuid", jobId.toString())).isZero();
    }

    @Test
    void aUsersGangWhosePodIsDeletedOnlyGivesUpItsAllocation() throws Exception {
        String label = "user-gone-" + UUID.randomUUID().toString().substring(0, 6);
        for (int i = 0; i < 2; i++) {
            driver.pods().inNamespace(NS).resource(userPod(label, i, 2)).create();
        }
        UUID jobId = admitted(label);
        await().atMost(Duration.ofSeconds(60)).until(() -> outbox(Subjects.PLACEMENTS_BOUND, jobId) == 1 && launched(jobId));

        driver.pods().inNamespace(NS).withName(label + "-0").delete(); // the user's operator (or kubectl) deletes one

        await().atMost(Duration.ofSeconds(20)).until(() -> outbox(Subjects.PLACEMENTS_FAILED, jobId) == 1);
        assertThat(db.queryString("select envelope from outbox_event where subject = ? and subject_id = ?", Subjects.PLACEMENTS_FAILED,
                jobId.toString())).contains("pod " + label + "-0 was deleted outside Gantry");
        assertThat(db.queryLong("select count(*) from allocation where job_id = ?::uuid", jobId.toString())).isZero();
        assertThat(db.queryLong("select count(*) from running_job where job_id = ?::uuid", jobId.toString())).isZero();
        Thread.sleep(1500);
        assertThat(podsOf(label)).as("the user's other pod is theirs: left alone").extracting(p -> p.getMetadata().getName())
                .containsExactly(label + "-1");
        assertThat(db.queryLong("select count(*) from pending_job where job_id = ?::uuid", jobId.toString()))
                .as("one pod of two is no gang").isZero();
        driver.pods().inNamespace(NS).withName(label + "-1").delete();
    }

    @Test
    void aGangAdmissionRefusedWaitsAndIsAskedAgainWhenItsPodsChange() throws Exception {
        String label = "user-refused-" + UUID.randomUUID().toString().substring(0, 6);
        for (int i = 0; i < 2; i++) {
            driver.pods().inNamespace(NS).resource(userPod(label, i, 2)).create();
        }
        PodGangFormed first = gangs.formed(label);
        try (TestNats nats = TestNats.connect(natsUrl)) { // what admission says of a namespace mapped to no team
            nats.publish(EventEnvelope.of(Subjects.JOBS_REFUSED, first.jobId().toString(),
                    new JobRefused(first.jobId(), NS, label, "namespace " + NS + " is mapped to no Gantry team", Instant.now())));
        }
        await().atMost(Duration.ofSeconds(20)).until(() -> db.queryLong(
                "select count(*) from cluster_gang where job_id = ?::uuid and refused_reason like '%mapped to no Gantry team%'",
                first.jobId().toString()) == 1);
        Thread.sleep(2500); // the same pods are not asked about again at every reconcile
        assertThat(gangsFormed(label)).isEqualTo(1);
        assertThat(db.queryLong("select count(*) from pending_job where job_id = ?::uuid", first.jobId().toString())).isZero();

        // the owner replaces a pod: a new gang, under a new job id, is put to admission
        driver.pods().inNamespace(NS).withName(label + "-1").delete();
        driver.pods().inNamespace(NS).resource(userPod(label, 2, 2)).create();
        await().atMost(Duration.ofSeconds(20)).until(() -> gangsFormed(label) == 2);
        assertThat(gangs.jobId(label)).isNotNull().isNotEqualTo(first.jobId());
    }

    @Test
    void aGangThatShrinksBeforeItIsPlacedIsWithdrawnAndALateAdmissionDoesNotRunIt() throws Exception {
        String label = "user-shrunk-" + UUID.randomUUID().toString().substring(0, 6);
        for (int i = 0; i < 2; i++) {
            driver.pods().inNamespace(NS).resource(userPod(label, i, 2)).create();
        }
        PodGangFormed gang = gangs.formed(label);
        driver.pods().inNamespace(NS).withName(label + "-0").delete();
        await().atMost(Duration.ofSeconds(20)).until(() -> outbox(Subjects.PLACEMENTS_GANG_DISSOLVED, gang.jobId()) == 1);
        assertThat(gangs.jobId(label)).isNull();

        // admission had queued it before it read the withdrawal: its jobs.queued arrives late
        JobQueued pods = gang.spec();
        try (TestNats nats = TestNats.connect(natsUrl)) {
            nats.publish(EventEnvelope.of(Subjects.JOBS_QUEUED, gang.jobId().toString(), new JobQueued(gang.jobId(), pods.name(),
                    pods.queue(), PodGangFormed.SUBMITTER_PREFIX + NS, 10, pods.submittedAt(), pods.minAvailable(), pods.taskGroups(),
                    null, null, null, false, Map.of(), pods.tolerations(), true, false, null)));
        }
        Thread.sleep(2500);
        assertThat(db.queryLong("select count(*) from pending_job where job_id = ?::uuid", gang.jobId().toString()))
                .as("a gang whose pods are gone is not planned").isZero();
        assertThat(db.queryLong("select count(*) from cluster_gang where job_id = ?::uuid", gang.jobId().toString()))
                .as("and no pods are made for it").isZero();
        assertThat(gangsFormed(label)).as("one pod of two forms no gang").isEqualTo(1);
    }

    /** A pod named and labelled as Gantry would make it, by someone else (no provenance signature). */
    private static Pod impostor(String name, UUID jobId, String task, String phase) {
        return new PodBuilder().withNewMetadata().withName(name).withNamespace(NS)
                .addToLabels(KubernetesActuator.LABEL_JOB, jobId.toString()).addToLabels(KubernetesActuator.LABEL_TASK, task)
                .addToLabels(KubernetesActuator.LABEL_ATTEMPT, "1").addToLabels(KubernetesActuator.LABEL_MANAGED_BY, "gantry")
                .endMetadata()
                .withNewSpec().withSchedulerName("gantry").withRestartPolicy("Never")
                .addNewContainer().withName("worker").withImage("miner:1").endContainer()
                .endSpec()
                .withNewStatus().withPhase(phase).endStatus().build();
    }

    @Test
    void aPodOfTheJobsNameThatGantryDidNotMakeIsNeverReused() throws Exception {
        UUID jobId = UUID.randomUUID();
        EventEnvelope<JobQueued> job = apiJob(jobId, List.of(new JobQueued.TaskGroup("worker", 1, 2, null, 1000, 1000, "trainer:5", null)));
        String name = KubernetesActuator.podName(jobId, job.payload().name(), "worker-0", 1);
        // names are predictable: someone makes the job's first pod before Gantry does, to get its GPUs
        driver.pods().inNamespace(NS).resource(impostor(name, jobId, "worker-0", "Pending")).create();
        try (TestNats nats = TestNats.connect(natsUrl)) {
            nats.publish(job);
        }
        await().atMost(Duration.ofSeconds(60)).until(() -> outbox(Subjects.PLACEMENTS_FAILED, jobId) == 1);
        assertThat(db.queryString("select envelope from outbox_event where subject = ? and subject_id = ?", Subjects.PLACEMENTS_FAILED,
                jobId.toString())).contains("not made by Gantry");
        assertThat(driver.bindings().inNamespace(NS).withName(name).get()).as("never bound to the job's node").isNull();
        assertThat(db.queryLong("select count(*) from allocation where job_id = ?::uuid", jobId.toString())).isZero();
    }

    @Test
    void aFailedPodLabelledWithARunningJobsIdAndAttemptDoesNotFailThatJob() throws Exception {
        UUID jobId = UUID.randomUUID();
        try (TestNats nats = TestNats.connect(natsUrl)) {
            nats.publish(apiJob(jobId, List.of(new JobQueued.TaskGroup("worker", 1, 2, null, 1000, 1000, "trainer:5", null))));
        }
        await().atMost(Duration.ofSeconds(90)).until(() -> podsOf(jobId.toString()).size() == 1 && launched(jobId));
        assertThat(podsOf(jobId.toString()).getFirst().getMetadata().getAnnotations()).containsKey(PodProvenance.ANNOTATION);

        driver.pods().inNamespace(NS).resource(impostor("not-gantrys-" + jobId.toString().substring(0, 8), jobId, "worker-0", "Failed"))
                .create();
        watcher.sweepSoon();
        Thread.sleep(3000);
        assertThat(outbox(Subjects.PLACEMENTS_FAILED, jobId)).as("a stranger's failed pod is not the job's").isZero();
        assertThat(db.queryLong("select count(*) from running_job where job_id = ?::uuid", jobId.toString())).isEqualTo(1);
        driver.pods().inNamespace(NS).withName("not-gantrys-" + jobId.toString().substring(0, 8)).withGracePeriod(0).delete();
    }

    @Test
    void thisReplicaHoldsTheLease() {
        Lease lease = driver.leases().inNamespace(NS).withName("placement-service-leader").get();
        assertThat(lease).isNotNull();
        assertThat(lease.getSpec().getHolderIdentity()).isEqualTo(election.identity());
        assertThat(leadership.electionEnabled()).isTrue();
        assertThat(leadership.leading()).isTrue();
    }

    // --- requests made to the mock API server, and the RBAC rules they must satisfy ---

    private static final List<RecordedRequest> SEEN = new ArrayList<>();

    /** The service's requests so far (the driver's own are left out). */
    private List<RecordedRequest> requests() throws InterruptedException {
        synchronized (SEEN) {
            for (RecordedRequest r; (r = server.getKubernetesMockServer().takeRequest(50, TimeUnit.MILLISECONDS)) != null;) {
                if (!TEST_AGENT.equals(r.getHeader("User-Agent"))) {
                    SEEN.add(r);
                }
            }
            return List.copyOf(SEEN);
        }
    }

    private record Rule(List<String> groups, List<String> resources, List<String> verbs) {
    }

    private static List<Rule> declaredRules() throws Exception {
        Properties p = new Properties();
        try (InputStream in = KubernetesBinderTest.class.getClassLoader().getResourceAsStream("application.properties")) {
            p.load(in);
        }
        List<Rule> rules = new ArrayList<>();
        String prefix = "quarkus.kubernetes.rbac.roles.placement-service.policy-rules.";
        for (int i = 0; p.containsKey(prefix + i + ".verbs"); i++) {
            rules.add(new Rule(split(p.getProperty(prefix + i + ".api-groups", "")), split(p.getProperty(prefix + i + ".resources")),
                    split(p.getProperty(prefix + i + ".verbs"))));
        }
        return rules;
    }

    private static List<String> split(String s) {
        List<String> out = new ArrayList<>();
        for (String part : s.split(",", -1)) {
            out.add(part.trim());
        }
        return out;
    }

    /** (api group, resource[/subresource], verb) of a request, as the API server's authorizer sees it. */
    static List<String> attributes(String method, String pathAndQuery) {
        String path = pathAndQuery.contains("?") ? pathAndQuery.substring(0, pathAndQuery.indexOf('?')) : pathAndQuery;
        String query = pathAndQuery.contains("?") ? pathAndQuery.substring(pathAndQuery.indexOf('?') + 1) : "";
        String[] s = path.replaceFirst("^/", "").split("/");
        String group;
        int i;
        if (s[0].equals("api")) {
            group = "";
            i = 2;
        } else {
            group = s[1];
            i = 3;
        }
        if (i < s.length && s[i].equals("namespaces") && i + 2 < s.length) {
            i += 2;
        }
        String resource = s[i];
        String name = i + 1 < s.length ? s[i + 1] : null;
        if (i + 2 < s.length) {
            resource += "/" + s[i + 2];
        }
        String verb = switch (method) {
            case "GET" -> name == null ? (query.contains("watch=true") ? "watch" : "list") : "get";
            case "POST" -> "create";
            case "PUT" -> "update";
            case "PATCH" -> "patch";
            case "DELETE" -> name == null ? "deletecollection" : "delete";
            default -> method.toLowerCase();
        };
        return List.of(group, resource, verb);
    }

    /** And the other way round: no declared right goes unused by the end of this class (least privilege). */
    @AfterAll
    static void everyDeclaredRightWasUsed() throws Exception {
        List<List<String>> used;
        synchronized (SEEN) {
            used = SEEN.stream().map(r -> attributes(r.getMethod(), r.getPath())).toList();
        }
        for (Rule rule : declaredRules()) {
            for (String group : rule.groups()) {
                for (String resource : rule.resources()) {
                    for (String verb : rule.verbs()) {
                        assertThat(used).as("declared right %s/%s %s was used", group, resource, verb).contains(List.of(group, resource, verb));
                    }
                }
            }
        }
    }

    private void assertEveryServiceRequestIsAllowedByTheRbacRules() throws Exception {
        List<Rule> rules = declaredRules();
        assertThat(rules).isNotEmpty();
        List<RecordedRequest> seen = requests();
        assertThat(seen).as("the service talked to the API server").isNotEmpty();
        for (RecordedRequest r : seen) {
            List<String> a = attributes(r.getMethod(), r.getPath());
            assertThat(rules).as("%s %s -> %s is allowed by a declared rule", r.getMethod(), r.getPath(), a)
                    .anyMatch(rule -> rule.groups().contains(a.get(0)) && rule.resources().contains(a.get(1)) && rule.verbs().contains(a.get(2)));
        }
    }
}
