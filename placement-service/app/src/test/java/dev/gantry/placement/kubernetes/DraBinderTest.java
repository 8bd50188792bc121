package dev.gantry.placement.kubernetes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.gantry.contracts.events.EventCodec;
import dev.gantry.contracts.events.EventEnvelope;
import dev.gantry.contracts.events.Subjects;
import dev.gantry.contracts.jobs.JobCancelled;
import dev.gantry.contracts.jobs.JobQueued;
import dev.gantry.contracts.nodes.NodeChanged;
import dev.gantry.contracts.nodes.NodeInfo;
import dev.gantry.contracts.resources.MigProfile;
import dev.gantry.placement.cluster.ClusterActuator;
import dev.gantry.placement.cluster.Leadership;
import dev.gantry.testing.TestDatabase;
import dev.gantry.testing.TestNats;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodStatusBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequestAllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimStatusBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
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
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Dynamic Resource Allocation in kubernetes mode, against the fabric8 mock server (CRUD mode) with the
 * GPU driver's ResourceSlices as NVIDIA's driver publishes them ({@link NvidiaDraSlices}), the real
 * PostgreSQL and JetStream: claims allocated to exactly the chosen devices before binding, shared GPUs
 * through a claim with the driver's sharing configuration, others' allocations respected, a crash between
 * claim allocation and binding reconciled, claims released when their use is over. After each test every
 * request the service made is checked against the RBAC rules declared in application.properties, and by
 * the end every DRA right declared was used.
 */
@QuarkusTest
@TestProfile(DraModeProfile.class)
@WithKubernetesTestServer(crud = true)
class DraBinderTest {

    private static final String NS = KubernetesModeProfile.NAMESPACE;
    private static final String NODE = "dra-a";
    private static final String MODEL = "K8S-DRA-GPU";
    private static final NodeInfo.Taint TAINT = new NodeInfo.Taint("gantry.dev/test", "dra", "NoSchedule");
    private static final String TEST_AGENT = "gantry-dra-test-driver";
    private static final Set<Integer> ISLAND_A = Set.of(0, 1, 2, 3);
    private static final Set<Integer> ISLAND_B = Set.of(4, 5, 6, 7);

    @KubernetesTestServer
    KubernetesServer server;

    @ConfigProperty(name = "gantry.nats.url")
    String natsUrl;

    @Inject
    TestDatabase db;

    @Inject
    Leadership leadership;

    @Inject
    PodWatcher watcher;

    @Inject
    DeviceClaims claims;

    @Inject
    PodSigningKey signingKey;

    @Inject
    KubernetesActuator actuator;

    private KubernetesClient driver;
    private final List<UUID> started = new ArrayList<>();

    private UserGangs gangs;

    /** Admission's part for a user gang ({@link UserGangs#admit}), its job stopped after the test. */
    private UUID admitted(String label) throws Exception {
        UUID jobId = gangs.admit(label);
        started.add(jobId);
        return jobId;
    }

    private static NodeInfo node() {
        return new NodeInfo(NODE, MODEL, 8, List.of(List.of(0, 1, 2, 3), List.of(4, 5, 6, 7)), List.of(), true,
                128_000, 1_024_000, new NodeInfo.Topology("z1", "s1", "leaf-d"), null, Map.of(), List.of(TAINT), true,
                NodeInfo.Health.READY, 81_920, null, 0, false, Instant.now());
    }

    @BeforeEach
    void setUp() throws Exception {
        gangs = new UserGangs(db, natsUrl, NS);
        driver = new KubernetesClientBuilder().withConfig(new ConfigBuilder(server.getClient().getConfiguration())
                .withUserAgent(TEST_AGENT).build()).build();
        if (driver.resources(ResourceSlice.class).withName(NODE + "-gpu.nvidia.com").get() == null) {
            driver.resources(ResourceSlice.class).resource(NvidiaDraSlices.eightGpus(NODE)).create();
        }
        try (TestNats nats = TestNats.connect(natsUrl)) {
            nats.publish(EventEnvelope.of(Subjects.NODES_UPSERTED, NODE, new NodeChanged(System.nanoTime(), node())));
        }
        await().atMost(Duration.ofSeconds(20)).until(() -> db.queryLong("select count(*) from node where name = ? and not removed", NODE) == 1);
        await().atMost(Duration.ofSeconds(20)).until(() -> leadership.leading() && claims.synced());
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
        watcher.sweepSoon();
        await().atMost(Duration.ofSeconds(20)).until(() -> gantryClaims().isEmpty());
        driver.resources(ResourceClaim.class).inNamespace("team-x").delete();
        driver.pods().inNamespace(NS).delete();
        driver.resources(ResourceClaim.class).inNamespace(NS).withLabel(USER_CLAIM).delete();
        assertEveryServiceRequestIsAllowedByTheRbacRules();
        driver.close();
    }

    private EventEnvelope<JobQueued> apiJob(UUID jobId, List<JobQueued.TaskGroup> groups) {
        started.add(jobId);
        return EventEnvelope.of(Subjects.JOBS_QUEUED, jobId.toString(), spec(jobId, groups));
    }

    private static JobQueued spec(UUID jobId, List<JobQueued.TaskGroup> groups) {
        return new JobQueued(jobId, "train-" + jobId.toString().substring(0, 6), "k8s-test", "kim", 10, Instant.now(), null,
                groups, List.of(MODEL), null, null, false, Map.of(), List.of(new JobQueued.Toleration(TAINT.key(), TAINT.value())),
                true, false, 600L);
    }

    private List<Pod> podsOf(UUID jobId) {
        return driver.pods().inNamespace(NS).withLabel(KubernetesActuator.LABEL_JOB, jobId.toString()).list().getItems();
    }

    private ResourceClaim claim(String name) {
        return driver.resources(ResourceClaim.class).inNamespace(NS).withName(name).get();
    }

    private List<ResourceClaim> gantryClaims() {
        return driver.resources(ResourceClaim.class).inNamespace(NS).withLabel(KubernetesActuator.LABEL_MANAGED_BY, "gantry").list().getItems();
    }

    private boolean bound(String pod) {
        return driver.bindings().inNamespace(NS).withName(pod).get() != null;
    }

    private List<Integer> allocatedIndices(UUID jobId, String task) {
        String text = db.queryString("select array_to_string(gpu_indices, ',') from allocation where job_id = ?::uuid and task = ?",
                jobId.toString(), task);
        return Arrays.stream(text.split(",")).map(Integer::valueOf).sorted().toList();
    }

    /** The GPU indices a claim's allocation names, read back through the slice (device name -> index attribute). */
    private static Set<Integer> indicesOf(ResourceClaim claim) {
        Set<Integer> indices = new TreeSet<>();
        for (DeviceRequestAllocationResult r : claim.getStatus().getAllocation().getDevices().getResults()) {
            assertThat(r.getDriver()).isEqualTo(NvidiaDraSlices.DRIVER);
            assertThat(r.getPool()).isEqualTo(NODE);
            for (int i = 0; i < 8; i++) {
                if (NvidiaDraSlices.deviceOf(i).equals(r.getDevice())) {
                    indices.add(i);
                }
            }
        }
        return indices;
    }

    private void runTo(Pod pod, String phase) {
        runTo(pod, NODE, phase);
    }

    private void runTo(Pod pod, String node, String phase) {
        driver.pods().inNamespace(NS).resource(new PodBuilder(pod).editSpec().withNodeName(node).endSpec()
                .withStatus(new PodStatusBuilder().withPhase(phase).build()).build()).update();
    }

    /** A claim kube-scheduler allocated for someone else's pod. */
    private void othersClaim(String name, String device) {
        othersClaimOn(name, NODE, device);
    }

    private void othersClaimOn(String name, String node, String device) {
        if (driver.namespaces().withName("team-x").get() == null) {
            driver.namespaces().resource(new io.fabric8.kubernetes.api.model.NamespaceBuilder().withNewMetadata().withName("team-x")
                    .endMetadata().build()).create();
        }
        ResourceClaim made = driver.resources(ResourceClaim.class).inNamespace("team-x").resource(new ResourceClaimBuilder()
                .withNewMetadata().withName(name).withNamespace("team-x").endMetadata()
                .withNewSpec().withNewDevices().addNewRequest().withName("gpu").withNewExactly().withDeviceClassName("gpu.nvidia.com")
                .endExactly().endRequest().endDevices().endSpec().build()).create();
        driver.resources(ResourceClaim.class).inNamespace("team-x").resource(new ResourceClaimBuilder(made)
                .withStatus(new ResourceClaimStatusBuilder().withNewAllocation().withNewDevices().addNewResult().withRequest("gpu")
                        .withDriver(NvidiaDraSlices.DRIVER).withPool(node).withDevice(device).endResult().endDevices().endAllocation()
                        .addNewReservedFor().withResource("pods").withName("their-pod").withUid("u-1").endReservedFor().build())
                .build()).updateStatus();
    }

    @Test
    void aFourGpuTasksClaimNamesTheFourDevicesOfOneIslandAndIsAllocatedBeforeThePodIsBound() throws Exception {
        UUID jobId = UUID.randomUUID();
        int before = requests().size(); // the requests of earlier tests (their Bindings) are not this job's
        try (TestNats nats = TestNats.connect(natsUrl)) {
            nats.publish(apiJob(jobId, List.of(new JobQueued.TaskGroup("worker", 1, 4, null, 1000, 1000, "trainer:7", null))));
        }
        await().atMost(Duration.ofSeconds(30)).until(() -> podsOf(jobId).size() == 1 && bound(podsOf(jobId).get(0).getMetadata().getName()));
        Pod pod = podsOf(jobId).get(0);
        String podName = pod.getMetadata().getName();
        String claimName = podName + "-gpus";
        // the pod asks for its GPUs through the claim, not the device plugin's resource
        assertThat(pod.getSpec().getResourceClaims()).singleElement().satisfies(c -> {
            assertThat(c.getName()).isEqualTo("gpus");
            assertThat(c.getResourceClaimName()).isEqualTo(claimName);
        });
        assertThat(pod.getSpec().getContainers().getFirst().getResources().getClaims()).singleElement()
                .satisfies(c -> assertThat(c.getName()).isEqualTo("gpus"));
        assertThat(pod.getSpec().getContainers().getFirst().getResources().getLimits()).doesNotContainKey("nvidia.com/gpu");

        ResourceClaim claim = claim(claimName);
        assertThat(claim.getSpec().getDevices().getRequests()).singleElement().satisfies(r -> {
            assertThat(r.getExactly().getDeviceClassName()).isEqualTo("gpu.nvidia.com");
            assertThat(r.getExactly().getCount()).isEqualTo(4L);
        });
        assertThat(claim.getMetadata().getOwnerReferences()).singleElement()
                .satisfies(o -> assertThat(o.getUid()).isEqualTo(pod.getMetadata().getUid()));
        Set<Integer> indices = indicesOf(claim);
        assertThat(indices).as("exactly the GPUs Gantry chose").containsExactlyElementsOf(allocatedIndices(jobId, "worker-0"));
        assertThat(indices).as("the four devices of one NVLink island").satisfiesAnyOf(
                i -> assertThat(i).isEqualTo(ISLAND_A), i -> assertThat(i).isEqualTo(ISLAND_B));
        assertThat(claim.getStatus().getReservedFor()).singleElement().satisfies(r -> {
            assertThat(r.getResource()).isEqualTo("pods");
            assertThat(r.getName()).isEqualTo(podName);
            assertThat(r.getUid()).isEqualTo(pod.getMetadata().getUid());
        });
        assertThat(claim.getStatus().getAllocation().getNodeSelector().getNodeSelectorTerms()).singleElement()
                .satisfies(t -> assertThat(t.getMatchFields()).singleElement().satisfies(f -> {
                    assertThat(f.getKey()).isEqualTo("metadata.name");
                    assertThat(f.getValues()).containsExactly(NODE);
                }));
        // record, allocate, then bind: the claim's status was written before the Binding was posted
        List<RecordedRequest> seen = requests();
        List<String> order = seen.subList(before, seen.size()).stream().map(r -> r.getMethod() + " " + r.getPath())
                .filter(r -> r.contains("/resourceclaims/" + claimName + "/status") || r.endsWith("/bindings") && r.startsWith("POST"))
                .toList();
        assertThat(order).first().asString().contains("/resourceclaims/" + claimName + "/status");

        // completion: the claim is deallocated and deleted
        runTo(pod, "Succeeded");
        await().atMost(Duration.ofSeconds(20)).until(() -> outbox(Subjects.PLACEMENTS_COMPLETED, jobId) == 1 && claim(claimName) == null);
    }

    @Test
    void sharedTasksShareTheirGpusClaimWhichCarriesTheDriversSharingConfiguration() throws Exception {
        UUID jobId = UUID.randomUUID();
        try (TestNats nats = TestNats.connect(natsUrl)) {
            nats.publish(apiJob(jobId, List.of(new JobQueued.TaskGroup("infer", 2, 1, 400, 500, 500, "server:1", null))));
        }
        await().atMost(Duration.ofSeconds(30)).until(() -> podsOf(jobId).size() == 2
                && podsOf(jobId).stream().allMatch(p -> bound(p.getMetadata().getName())));
        for (Pod pod : podsOf(jobId)) {
            String task = pod.getMetadata().getLabels().get(KubernetesActuator.LABEL_TASK);
            int gpu = allocatedIndices(jobId, task).getFirst();
            String claimName = "gantry-shared-" + NODE + "-gpu" + gpu;
            assertThat(pod.getSpec().getResourceClaims()).singleElement()
                    .satisfies(c -> assertThat(c.getResourceClaimName()).isEqualTo(claimName));
            assertThat(pod.getSpec().getContainers().getFirst().getResources().getLimits())
                    .as("the GPU comes through the claim, no resource a node would have to advertise")
                    .doesNotContainKeys("nvidia.com/gpu", KubernetesActuator.ANNOTATION_GPU_MILLI);
            ResourceClaim claim = claim(claimName);
            assertThat(claim.getSpec().getDevices().getConfig()).singleElement().satisfies(c -> {
                assertThat(c.getOpaque().getDriver()).isEqualTo("gpu.nvidia.com");
                assertThat(EventCodec.toJson(c.getOpaque().getParameters())).contains("\"apiVersion\":\"resource.nvidia.com/v1beta1\"")
                        .contains("\"kind\":\"GpuConfig\"").contains("\"strategy\":\"TimeSlicing\"");
            });
            assertThat(claim.getStatus().getAllocation().getDevices().getConfig()).singleElement()
                    .satisfies(c -> assertThat(c.getSource()).isEqualTo("FromClaim"));
            assertThat(indicesOf(claim)).containsExactly(gpu);
            assertThat(claim.getStatus().getReservedFor()).extracting(r -> r.getName()).contains(pod.getMetadata().getName());
        }
        Map<Integer, Long> podsPerGpu = podsOf(jobId).stream().collect(Collectors.groupingBy(
                p -> allocatedIndices(jobId, p.getMetadata().getLabels().get(KubernetesActuator.LABEL_TASK)).getFirst(), Collectors.counting()));
        podsPerGpu.forEach((gpu, pods) -> assertThat(claim("gantry-shared-" + NODE + "-gpu" + gpu).getStatus().getReservedFor())
                .as("every pod on GPU %d is reserved in its one claim", gpu).hasSize(pods.intValue()));
    }

    @Test
    void devicesAllocatedToOthersClaimsAreNeverChosen() throws Exception {
        othersClaim("their-gpu", NvidiaDraSlices.deviceOf(1)); // a whole GPU of island A
        othersClaim("their-mig", NvidiaDraSlices.deviceOf(5) + "-mig-1g10gb-19-0"); // a MIG slice of GPU 5: island B's GPU 5 is taken
        await().atMost(Duration.ofSeconds(10)).until(() -> claims.held().stream().anyMatch(h -> h.node().equals(NODE) && h.gpus().equals(List.of(1, 5))));

        UUID big = UUID.randomUUID();
        UUID four = UUID.randomUUID();
        try (TestNats nats = TestNats.connect(natsUrl)) {
            nats.publish(apiJob(big, List.of(new JobQueued.TaskGroup("worker", 1, 7, null, 100, 100, "trainer:7", null))));
            nats.publish(apiJob(four, List.of(new JobQueued.TaskGroup("worker", 1, 3, null, 100, 100, "trainer:7", null))));
        }
        await().atMost(Duration.ofSeconds(30)).until(() -> podsOf(four).size() == 1 && bound(podsOf(four).get(0).getMetadata().getName()));
        Set<Integer> chosen = indicesOf(claim(podsOf(four).get(0).getMetadata().getName() + "-gpus"));
        assertThat(chosen).hasSize(3).doesNotContain(1, 5);
        assertThat(allocatedIndices(four, "worker-0")).doesNotContain(1, 5);
        Thread.sleep(3000); // a few windows
        assertThat(podsOf(big)).as("seven GPUs do not fit in the six others leave").isEmpty();
        assertThat(db.queryLong("select count(*) from pending_job where job_id = ?::uuid", big.toString())).isEqualTo(1);
    }

    /** The node of {@link NvidiaDraSlices#migNode} as the inventory describes it: its MIG devices by UUID. */
    private static NodeInfo migNode(String name) {
        List<NodeInfo.MigDevice> devices = new ArrayList<>();
        for (int start : List.of(0, 4)) {
            devices.add(new NodeInfo.MigDevice(NvidiaDraSlices.migUuidOf(name, 2, start), 2, "3g.40gb",
                    NvidiaDraSlices.migDeviceOf(2, "3g.40gb", 9, start)));
        }
        for (int start = 0; start < 7; start++) {
            devices.add(new NodeInfo.MigDevice(NvidiaDraSlices.migUuidOf(name, 3, start), 3, "1g.10gb",
                    NvidiaDraSlices.migDeviceOf(3, "1g.10gb", 19, start)));
        }
        return new NodeInfo(name, MODEL, 4, List.of(), List.of(), false, 64_000, 512_000, new NodeInfo.Topology("z1", "s1", "leaf-m"),
                null, Map.of(), List.of(TAINT), true, NodeInfo.Health.READY, 81_920,
                new NodeInfo.Mig("mixed", Map.of("3g.40gb", 2, "1g.10gb", 7), devices), 0, false, Instant.now());
    }

    @Test
    void aMigRequestGetsAMigDeviceAndItsClaimNamesExactlyThatDevice() throws Exception {
        String migNode = "dra-mig";
        driver.resources(ResourceSlice.class).resource(NvidiaDraSlices.migNode(migNode)).create();
        try (TestNats nats = TestNats.connect(natsUrl)) {
            nats.publish(EventEnvelope.of(Subjects.NODES_UPSERTED, migNode, new NodeChanged(System.nanoTime(), migNode(migNode))));
        }
        try {
            await().atMost(Duration.ofSeconds(20)).until(() -> db.queryLong("select count(*) from node where name = ? and not removed", migNode) == 1);
            // kube-scheduler gave someone else's pod the 3g.40gb device at placement 0 of GPU 2
            String theirs = NvidiaDraSlices.migDeviceOf(2, "3g.40gb", 9, 0);
            String ours = NvidiaDraSlices.migDeviceOf(2, "3g.40gb", 9, 4);
            othersClaimOn("their-3g", migNode, theirs);
            await().atMost(Duration.ofSeconds(10)).until(() -> claims.held(List.of(migNode(migNode))).stream()
                    .anyMatch(h -> h.migDevices().equals(List.of(NvidiaDraSlices.migUuidOf(migNode, 2, 0)))));

            UUID infer = UUID.randomUUID();
            UUID two = UUID.randomUUID();
            try (TestNats nats = TestNats.connect(natsUrl)) {
                nats.publish(apiJob(infer, List.of(new JobQueued.TaskGroup("infer", 1, 1, null, 500, 500, "server:2", null, null, null,
                        "3g.40gb"))));
                nats.publish(apiJob(two, List.of(new JobQueued.TaskGroup("infer", 1, 2, null, 500, 500, "server:2", null, null, null,
                        "3g.40gb"))));
            }
            await().atMost(Duration.ofSeconds(30)).until(() -> podsOf(infer).size() == 1 && bound(podsOf(infer).get(0).getMetadata().getName()));
            Pod pod = podsOf(infer).get(0);
            String podName = pod.getMetadata().getName();
            assertThat(db.queryString("select node from allocation where job_id = ?::uuid", infer.toString())).isEqualTo(migNode);
            assertThat(db.queryString("select array_to_string(mig_devices, ',') from allocation where job_id = ?::uuid", infer.toString()))
                    .as("the free 3g.40gb device, by its MIG UUID").isEqualTo(NvidiaDraSlices.migUuidOf(migNode, 2, 4));
            assertThat(db.queryString("select array_to_string(gpu_indices, ',') from allocation where job_id = ?::uuid", infer.toString()))
                    .as("a MIG task holds no GPU index").isEmpty();
            assertThat(pod.getSpec().getResourceClaims()).singleElement()
                    .satisfies(c -> assertThat(c.getResourceClaimName()).isEqualTo(podName + "-gpus"));
            assertThat(pod.getSpec().getContainers().getFirst().getResources().getLimits())
                    .as("the device comes through the claim").doesNotContainKeys("nvidia.com/gpu", "nvidia.com/mig-3g.40gb");
            assertThat(pod.getMetadata().getAnnotations()).containsEntry(KubernetesActuator.ANNOTATION_MIG_DEVICES,
                    NvidiaDraSlices.migUuidOf(migNode, 2, 4));

            ResourceClaim claim = claim(podName + "-gpus");
            assertThat(claim.getSpec().getDevices().getRequests()).singleElement().satisfies(r -> {
                assertThat(r.getExactly().getDeviceClassName()).as("NVIDIA's class of MIG devices").isEqualTo("mig.nvidia.com");
                assertThat(r.getExactly().getCount()).isEqualTo(1L);
                assertThat(r.getExactly().getSelectors()).singleElement()
                        .satisfies(sel -> assertThat(sel.getCel().getExpression()).isEqualTo("device.attributes['gpu.nvidia.com'].profile == '3g.40gb'"));
            });
            assertThat(claim.getStatus().getAllocation().getDevices().getResults()).singleElement().satisfies(r -> {
                assertThat(r.getDriver()).isEqualTo(NvidiaDraSlices.DRIVER);
                assertThat(r.getPool()).isEqualTo(migNode);
                assertThat(r.getDevice()).as("exactly the MIG device Gantry chose, not the one someone else holds").isEqualTo(ours);
            });
            assertThat(claim.getStatus().getReservedFor()).singleElement().satisfies(r -> assertThat(r.getName()).isEqualTo(podName));

            Thread.sleep(2000); // a few windows
            assertThat(podsOf(two)).as("two 3g.40gb devices: one is someone else's, the other ours").isEmpty();
            assertThat(db.queryString("select reason from pending_job where job_id = ?::uuid", two.toString()))
                    .contains("MIG devices 3g.40gb").contains("0 free");

            runTo(pod, migNode, "Succeeded");
            await().atMost(Duration.ofSeconds(20)).until(() -> outbox(Subjects.PLACEMENTS_COMPLETED, infer) == 1 && claim(podName + "-gpus") == null);
        } finally {
            driver.resources(ResourceClaim.class).inNamespace("team-x").withName("their-3g").delete();
            try (TestNats nats = TestNats.connect(natsUrl)) {
                nats.publish(EventEnvelope.of(Subjects.NODES_REMOVED, migNode, new dev.gantry.contracts.nodes.NodeRemoved(System.nanoTime(), migNode)));
            }
            driver.resources(ResourceSlice.class).withName(migNode + "-gpu.nvidia.com").delete();
        }
    }

    @Test
    void aCrashBetweenClaimAllocationAndBindingIsFinishedByTheSweep() throws Exception {
        UUID jobId = UUID.randomUUID();
        started.add(jobId);
        JobQueued job = spec(jobId, List.of(new JobQueued.TaskGroup("worker", 1, 4, null, 1000, 1000, "trainer:5", null)));
        String podName = KubernetesActuator.podName(jobId, job.name(), "worker-0", 1);
        // record (as the binder does), then pod, then claim allocated; the service stops before the Binding
        db.execute("""
                with running as (
                    insert into running_job (job_id, queue, priority, spec, submitted_at, bound_at, due_at)
                    values (?::uuid, 'k8s-test', 10, ?, now() - interval '10 minutes', now() - interval '1 minute', '9999-12-31')),
                allocated as (
                    insert into allocation (job_id, task, node, gpu_indices, allocated_at, cpu_millis, memory_mib)
                    values (?::uuid, 'worker-0', ?, '{4,5,6,7}', now() - interval '1 minute', 1000, 1000))
                insert into cluster_gang (job_id, namespace, gang_label, user_pods, pods, attempt, created_at, launched_at)
                values (?::uuid, ?, ?, false, '{}', 1, now() - interval '1 minute', null)
                """, jobId.toString(), EventCodec.toJson(job), jobId.toString(), NODE, jobId.toString(), NS, jobId.toString());
        ClusterActuator.TaskBinding task = new ClusterActuator.TaskBinding("worker-0", NODE, List.of(4, 5, 6, 7), null);
        Pod pod = driver.pods().inNamespace(NS).resource(gantryPod(jobId, podName, task)).create();
        claims.allocate(NS, pod, task, jobId.toString(), 1);
        ResourceClaim allocated = claim(podName + "-gpus");
        assertThat(indicesOf(allocated)).containsExactly(4, 5, 6, 7);
        assertThat(bound(podName)).isFalse();

        watcher.sweepSoon(); // what a restart, gaining the Lease, or the informer's resync does
        await().atMost(Duration.ofSeconds(20)).until(() -> bound(podName)
                && db.queryLong("select count(*) from cluster_gang where job_id = ?::uuid and launched_at is not null", jobId.toString()) == 1);
        ResourceClaim after = claim(podName + "-gpus");
        assertThat(after.getMetadata().getUid()).as("the claim allocated before the crash is reused").isEqualTo(allocated.getMetadata().getUid());
        assertThat(indicesOf(after)).containsExactly(4, 5, 6, 7);
        assertThat(after.getStatus().getReservedFor()).singleElement().satisfies(r -> assertThat(r.getName()).isEqualTo(podName));
        assertThat(driver.bindings().inNamespace(NS).withName(podName).get().getTarget().getName()).isEqualTo(NODE);
    }

    @Test
    void aClaimAllocatedForAPlacementNoLongerRecordedIsReleased() throws Exception {
        // the service allocated a claim, then crashed; meanwhile the placement was undone (cancelled, requeued)
        UUID jobId = UUID.randomUUID();
        JobQueued job = spec(jobId, List.of(new JobQueued.TaskGroup("worker", 1, 2, null, 1000, 1000, "trainer:5", null)));
        String podName = KubernetesActuator.podName(jobId, job.name(), "worker-0", 1);
        ClusterActuator.TaskBinding task = new ClusterActuator.TaskBinding("worker-0", NODE, List.of(2, 3), null);
        Pod pod = driver.pods().inNamespace(NS).resource(gantryPod(jobId, podName, task)).create();
        claims.allocate(NS, pod, task, jobId.toString(), 1);
        assertThat(claim(podName + "-gpus")).isNotNull();

        watcher.sweepSoon();
        await().atMost(Duration.ofSeconds(20)).until(() -> claim(podName + "-gpus") == null);
        assertThat(bound(podName)).isFalse();
    }

    @Test
    void aLaunchThatFailsAfterAllocatingAClaimReleasesItWithItsPods() throws Exception {
        othersClaim("their-gpu-6", NvidiaDraSlices.deviceOf(6));
        await().atMost(Duration.ofSeconds(10)).until(() -> claims.held().stream().anyMatch(h -> h.gpus().contains(6)));
        UUID jobId = UUID.randomUUID();
        JobQueued job = spec(jobId, List.of(new JobQueued.TaskGroup("worker", 2, 4, null, 100, 100, "trainer:7", null)));
        // as a stale plan would have it: the second task on GPUs of which someone else holds one
        ClusterActuator.Gang gang = new ClusterActuator.Gang(new ClusterActuator.GangRef(jobId, NS, jobId.toString(), false), job,
                List.of(new ClusterActuator.TaskBinding("worker-0", NODE, List.of(0, 1, 2, 3), null),
                        new ClusterActuator.TaskBinding("worker-1", NODE, List.of(4, 5, 6, 7), null)),
                Map.of(), 1);
        String first = KubernetesActuator.podName(jobId, job.name(), "worker-0", 1);

        org.assertj.core.api.Assertions.assertThatThrownBy(() -> actuator.launch(gang))
                .isInstanceOf(dev.gantry.placement.cluster.ClusterActionException.class)
                .hasMessageContaining("allocated to claim team-x/their-gpu-6");
        assertThat(requests().stream().map(r -> r.getMethod() + " " + r.getPath()))
                .as("the first task's claim was allocated before the second failed")
                .contains("PUT /apis/resource.k8s.io/v1/namespaces/" + NS + "/resourceclaims/" + first + "-gpus/status");
        assertThat(podsOf(jobId)).as("the gang's pods are rolled back").allSatisfy(p -> assertThat(p.getMetadata().getDeletionTimestamp()).isNotNull());
        assertThat(claim(first + "-gpus")).as("and the claim allocated for one of them released").isNull();
        assertThat(driver.resources(ResourceClaim.class).inNamespace("team-x").withName("their-gpu-6").get().getStatus().getAllocation())
                .as("someone else's claim is left alone").isNotNull();
    }

    // --- users' own pods with their own claims ---

    private static final String USER_CLAIM = "test.gantry.dev/user-claim";

    /** A user's claim (or a claim the resourceclaim controller made from a template) with one request. */
    private ResourceClaim userClaim(String name, String deviceClass, Long count, String allocationMode, String... selectors) {
        var request = new io.fabric8.kubernetes.api.model.resource.v1.ExactDeviceRequestBuilder().withDeviceClassName(deviceClass)
                .withAllocationMode(allocationMode).withCount(count);
        for (String cel : selectors) {
            request.addNewSelector().withNewCel().withExpression(cel).endCel().endSelector();
        }
        return driver.resources(ResourceClaim.class).inNamespace(NS).resource(new ResourceClaimBuilder()
                .withNewMetadata().withName(name).withNamespace(NS).addToLabels(USER_CLAIM, "true").endMetadata()
                .withNewSpec().withNewDevices().addNewRequest().withName("gpus").withExactly(request.build()).endRequest().endDevices().endSpec()
                .build()).create();
    }

    /**
     * Pod {@code i} of a user's gang as their operator makes it (scheduler gantry, gang labels), asking for its devices through the
     * claim {@code claim} or, with {@code template}, through a claim the resourceclaim controller makes from that template.
     */
    private static Pod userClaimPod(String label, int i, int minAvailable, String claim, String template) {
        return new PodBuilder().withNewMetadata().withName(label + "-" + i).withNamespace(NS)
                .addToLabels("gantry.dev/job", label).addToLabels("gantry.dev/min-available", String.valueOf(minAvailable))
                .addToLabels("gantry.dev/queue", "k8s-test")
                .endMetadata()
                .withNewSpec().withSchedulerName("gantry")
                .addNewToleration().withKey(TAINT.key()).withValue(TAINT.value()).withEffect("NoSchedule").endToleration()
                .addNewContainer().withName("main").withImage("pytorch:2").withNewResources().addToRequests("cpu", new io.fabric8.kubernetes.api.model.Quantity("500m"))
                .addNewClaim().withName("gpus").endClaim().endResources().endContainer()
                .addNewResourceClaim().withName("gpus").withResourceClaimName(claim).withResourceClaimTemplateName(template).endResourceClaim()
                .endSpec().build();
    }

    private Pod pod(String name) {
        return driver.pods().inNamespace(NS).withName(name).get();
    }

    private boolean allocated(String claim) {
        ResourceClaim c = claim(claim);
        return c != null && c.getStatus() != null && c.getStatus().getAllocation() != null;
    }

    @Test
    void aUsersPodWithItsOwnGpuClaimForFourGetsTheFourDevicesOfOneIslandInIt() throws Exception {
        String tag = UUID.randomUUID().toString().substring(0, 6);
        String label = "user-claim-" + tag;
        String claimName = "their-gpus-" + tag;
        int before = requests().size();
        userClaim(claimName, "gpu.nvidia.com", 4L, "ExactCount");
        driver.pods().inNamespace(NS).resource(userClaimPod(label, 0, 1, claimName, null)).create();

        assertThat(gangs.formed(label).spec().taskGroups()).as("the claim is read as four whole GPUs").singleElement().satisfies(g -> {
            assertThat(g.gpusPerReplica()).isEqualTo(4);
            assertThat(g.migProfile()).isNull();
        });
        UUID jobId = admitted(label);
        await().atMost(Duration.ofSeconds(30)).until(() -> bound(label + "-0"));
        Pod pod = pod(label + "-0");
        ResourceClaim claim = claim(claimName);
        Set<Integer> indices = indicesOf(claim);
        assertThat(indices).as("exactly the GPUs Gantry chose").containsExactlyElementsOf(allocatedIndices(jobId, "pod-0"));
        assertThat(indices).as("the four devices of one NVLink island").satisfiesAnyOf(
                i -> assertThat(i).isEqualTo(ISLAND_A), i -> assertThat(i).isEqualTo(ISLAND_B));
        assertThat(claim.getStatus().getAllocation().getDevices().getResults()).allSatisfy(r -> assertThat(r.getRequest()).isEqualTo("gpus"));
        assertThat(claim.getStatus().getReservedFor()).singleElement().satisfies(r -> {
            assertThat(r.getResource()).isEqualTo("pods");
            assertThat(r.getName()).isEqualTo(label + "-0");
            assertThat(r.getUid()).isEqualTo(pod.getMetadata().getUid());
        });
        List<RecordedRequest> during = requests();
        List<String> order = during.subList(before, during.size()).stream().map(r -> r.getMethod() + " " + r.getPath())
                .filter(r -> r.contains("/resourceclaims/" + claimName + "/status") || r.equals("POST /api/v1/namespaces/" + NS + "/bindings"))
                .toList();
        assertThat(order).as("allocated, then bound").first().asString().contains("/resourceclaims/" + claimName + "/status");
        assertThat(claims.held()).as("the devices Gantry allocated for the user's pod are Gantry's, not someone else's")
                .noneMatch(h -> h.node().equals(NODE) && h.gpus().stream().anyMatch(indices::contains));

        runTo(pod, "Succeeded");
        await().atMost(Duration.ofSeconds(20)).until(() -> outbox(Subjects.PLACEMENTS_COMPLETED, jobId) == 1 && !allocated(claimName));
        assertThat(claim(claimName)).as("the user's claim is deallocated, not deleted").isNotNull();
        assertThat(claim(claimName).getStatus().getReservedFor()).isNullOrEmpty();
    }

    @Test
    void aTemplatesClaimIsAllocatedOnceTheResourceClaimControllerHasMadeIt() throws Exception {
        String tag = UUID.randomUUID().toString().substring(0, 6);
        String label = "user-template-" + tag;
        Pod pod = driver.pods().inNamespace(NS).resource(userClaimPod(label, 0, 1, null, "two-gpus")).create();
        // the resourceclaim controller has not made the pod's claim yet: nothing is bound, a launch now is refused
        ClusterActuator.Gang gang = new ClusterActuator.Gang(new ClusterActuator.GangRef(UUID.randomUUID(), NS, label, true), null,
                List.of(new ClusterActuator.TaskBinding("pod-0", NODE, List.of(0, 1), null)), Map.of("pod-0", label + "-0"), 1);
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> actuator.launch(gang))
                .isInstanceOf(dev.gantry.placement.cluster.ClusterActionException.class)
                .hasMessageContaining("template two-gpus").hasMessageContaining("not made yet")
                .satisfies(e -> assertThat(((dev.gantry.placement.cluster.ClusterActionException) e).permanent()).as("retried").isFalse());
        assertThat(bound(label + "-0")).isFalse();
        assertThat(pod(label + "-0").getMetadata().getDeletionTimestamp()).as("the user's pod is left alone").isNull();
        await().during(Duration.ofSeconds(2)).atMost(Duration.ofSeconds(4)).until(() -> gangs.jobId(label) == null);

        // the controller makes the claim from the template and names it in the pod's status
        String claimName = label + "-0-gpus-x7k2p";
        ResourceClaim made = userClaim(claimName, "gpu.nvidia.com", 2L, null);
        driver.resources(ResourceClaim.class).inNamespace(NS).resource(new ResourceClaimBuilder(made).editMetadata()
                .addToAnnotations("resource.kubernetes.io/pod-claim-name", "gpus")
                .addNewOwnerReference().withApiVersion("v1").withKind("Pod").withName(pod.getMetadata().getName())
                .withUid(pod.getMetadata().getUid()).withController(true).endOwnerReference().endMetadata().build()).update();
        driver.pods().inNamespace(NS).resource(new PodBuilder(pod(label + "-0")).withNewStatus().withPhase("Pending")
                .addNewResourceClaimStatus().withName("gpus").withResourceClaimName(claimName).endResourceClaimStatus().endStatus().build())
                .update();

        assertThat(gangs.formed(label).spec().taskGroups()).singleElement().satisfies(g -> assertThat(g.gpusPerReplica()).isEqualTo(2));
        UUID jobId = admitted(label);
        await().atMost(Duration.ofSeconds(30)).until(() -> bound(label + "-0") && allocated(claimName));
        assertThat(indicesOf(claim(claimName))).containsExactlyElementsOf(allocatedIndices(jobId, "pod-0"));
        assertThat(claim(claimName).getStatus().getReservedFor()).singleElement()
                .satisfies(r -> assertThat(r.getName()).isEqualTo(label + "-0"));
    }

    @Test
    void aUsersMigClaimGetsAFreeMigDeviceOfItsProfile() throws Exception {
        String migNode = "dra-mig-user";
        driver.resources(ResourceSlice.class).resource(NvidiaDraSlices.migNode(migNode)).create();
        try (TestNats nats = TestNats.connect(natsUrl)) {
            nats.publish(EventEnvelope.of(Subjects.NODES_UPSERTED, migNode, new NodeChanged(System.nanoTime(), migNode(migNode))));
        }
        try {
            await().atMost(Duration.ofSeconds(20)).until(() -> db.queryLong("select count(*) from node where name = ? and not removed", migNode) == 1);
            othersClaimOn("their-3g-0", migNode, NvidiaDraSlices.migDeviceOf(2, "3g.40gb", 9, 0));
            await().atMost(Duration.ofSeconds(10)).until(() -> claims.held(List.of(migNode(migNode))).stream()
                    .anyMatch(h -> h.migDevices().equals(List.of(NvidiaDraSlices.migUuidOf(migNode, 2, 0)))));
            String tag = UUID.randomUUID().toString().substring(0, 6);
            String label = "user-mig-claim-" + tag;
            String claimName = "their-mig-" + tag;
            userClaim(claimName, "mig.nvidia.com", 1L, "ExactCount", "device.attributes['gpu.nvidia.com'].profile == '3g.40gb'");
            driver.pods().inNamespace(NS).resource(userClaimPod(label, 0, 1, claimName, null)).create();

            assertThat(gangs.formed(label).spec().taskGroups()).singleElement().satisfies(g -> {
                assertThat(g.migProfile()).isEqualTo("3g.40gb");
                assertThat(g.gpusPerReplica()).as("MIG devices").isEqualTo(1);
            });
            UUID jobId = admitted(label);
            await().atMost(Duration.ofSeconds(30)).until(() -> bound(label + "-0") && allocated(claimName));
            assertThat(db.queryString("select array_to_string(mig_devices, ',') from allocation where job_id = ?::uuid", jobId.toString()))
                    .as("the free 3g.40gb device").isEqualTo(NvidiaDraSlices.migUuidOf(migNode, 2, 4));
            assertThat(claim(claimName).getStatus().getAllocation().getDevices().getResults()).singleElement().satisfies(r -> {
                assertThat(r.getPool()).isEqualTo(migNode);
                assertThat(r.getDevice()).isEqualTo(NvidiaDraSlices.migDeviceOf(2, "3g.40gb", 9, 4));
                assertThat(r.getRequest()).isEqualTo("gpus");
            });
            runTo(pod(label + "-0"), migNode, "Succeeded");
            await().atMost(Duration.ofSeconds(20)).until(() -> outbox(Subjects.PLACEMENTS_COMPLETED, jobId) == 1 && !allocated(claimName));
        } finally {
            driver.resources(ResourceClaim.class).inNamespace("team-x").withName("their-3g-0").delete();
            try (TestNats nats = TestNats.connect(natsUrl)) {
                nats.publish(EventEnvelope.of(Subjects.NODES_REMOVED, migNode, new dev.gantry.contracts.nodes.NodeRemoved(System.nanoTime(), migNode)));
            }
            driver.resources(ResourceSlice.class).withName(migNode + "-gpu.nvidia.com").delete();
        }
    }

    @Test
    void aClaimGantryCannotReadExactlyIsRefusedWithItsReasonNotPlacedAsSomethingElse() throws Exception {
        String tag = UUID.randomUUID().toString().substring(0, 6);
        Map<String, String> why = new java.util.LinkedHashMap<>();
        userClaim("all-" + tag, "gpu.nvidia.com", null, "All");
        why.put("all-" + tag, "allocationMode All");
        userClaim("fpga-" + tag, "fpga.example.com", 1L, "ExactCount");
        why.put("fpga-" + tag, "class fpga.example.com");
        userClaim("h100-" + tag, "gpu.nvidia.com", 2L, "ExactCount", "device.attributes['gpu.nvidia.com'].productName == 'H100'");
        why.put("h100-" + tag, "productName == 'H100'");
        userClaim("anymig-" + tag, "mig.nvidia.com", 1L, "ExactCount");
        why.put("anymig-" + tag, "of any profile");
        for (String claimName : why.keySet()) {
            driver.pods().inNamespace(NS).resource(userClaimPod("refused-" + claimName, 0, 1, claimName, null)).create();
        }
        why.forEach((claimName, reason) -> {
            JobQueued.TaskGroup group = gangs.formed("refused-" + claimName).spec().taskGroups().getFirst();
            assertThat(group.migProfile()).as("what was asked, which admission refuses as no MIG profile")
                    .contains("claim " + claimName).contains(reason);
            assertThat(MigProfile.valid(group.migProfile())).isFalse();
            assertThat(allocated(claimName)).isFalse();
        });
    }

    @Test
    void aUsersClaimAllocatedBySomeoneElseIsNeverOverwritten() throws Exception {
        String tag = UUID.randomUUID().toString().substring(0, 6);
        String label = "user-taken-" + tag;
        String claimName = "taken-" + tag;
        ResourceClaim made = userClaim(claimName, "gpu.nvidia.com", 1L, "ExactCount");
        // kube-scheduler allocated it for another pod of the user's
        driver.resources(ResourceClaim.class).inNamespace(NS).resource(new ResourceClaimBuilder(made)
                .withStatus(new ResourceClaimStatusBuilder().withNewAllocation().withNewDevices().addNewResult().withRequest("gpus")
                        .withDriver(NvidiaDraSlices.DRIVER).withPool(NODE).withDevice(NvidiaDraSlices.deviceOf(7)).endResult().endDevices()
                        .endAllocation().addNewReservedFor().withResource("pods").withName("their-other-pod").withUid("u-2").endReservedFor().build())
                .build()).updateStatus();
        await().atMost(Duration.ofSeconds(10)).until(() -> claims.held().stream().anyMatch(h -> h.gpus().contains(7)));
        driver.pods().inNamespace(NS).resource(userClaimPod(label, 0, 1, claimName, null)).create();
        UUID jobId = admitted(label);

        await().atMost(Duration.ofSeconds(30)).until(() -> outbox(Subjects.PLACEMENTS_FAILED, jobId) >= 1);
        assertThat(db.queryString("select envelope from outbox_event where subject = ? and subject_id = ?", Subjects.PLACEMENTS_FAILED,
                jobId.toString())).contains("allocated already, not by Gantry").contains("not overwritten");
        assertThat(bound(label + "-0")).isFalse();
        ResourceClaim after = claim(claimName);
        assertThat(after.getStatus().getAllocation().getDevices().getResults()).singleElement()
                .satisfies(r -> assertThat(r.getDevice()).isEqualTo(NvidiaDraSlices.deviceOf(7)));
        assertThat(after.getStatus().getReservedFor()).singleElement().satisfies(r -> assertThat(r.getName()).isEqualTo("their-other-pod"));
        assertThat(after.getMetadata().getAnnotations()).as("not marked as Gantry's").isNullOrEmpty();
    }

    @Test
    void aClaimTwoPodsOfOneGangShareFailsTheGangSayingSoAndIsLeftUnallocated() throws Exception {
        String tag = UUID.randomUUID().toString().substring(0, 6);
        String label = "user-shared-" + tag;
        String claimName = "shared-" + tag;
        userClaim(claimName, "gpu.nvidia.com", 1L, "ExactCount");
        for (int i = 0; i < 2; i++) {
            driver.pods().inNamespace(NS).resource(userClaimPod(label, i, 2, claimName, null)).create();
        }
        UUID jobId = admitted(label);
        await().atMost(Duration.ofSeconds(30)).until(() -> outbox(Subjects.PLACEMENTS_FAILED, jobId) >= 1);
        assertThat(db.queryString("select envelope from outbox_event where subject = ? and subject_id = ?", Subjects.PLACEMENTS_FAILED,
                jobId.toString())).contains("a claim shared by pods of one gang is not supported");
        assertThat(bound(label + "-0") || bound(label + "-1")).isFalse();
        await().atMost(Duration.ofSeconds(10)).until(() -> !allocated(claimName));
    }

    @Test
    void aRollbackClearsTheAllocationOfAUsersClaimAndLeavesTheClaimAndItsPods() throws Exception {
        othersClaim("their-gpu-5", NvidiaDraSlices.deviceOf(5));
        await().atMost(Duration.ofSeconds(10)).until(() -> claims.held().stream().anyMatch(h -> h.gpus().contains(5)));
        String tag = UUID.randomUUID().toString().substring(0, 6);
        String label = "user-rollback-" + tag;
        for (int i = 0; i < 2; i++) {
            userClaim("rb-" + tag + "-" + i, "gpu.nvidia.com", 4L, "ExactCount");
            driver.pods().inNamespace(NS).resource(userClaimPod(label, i, 3, "rb-" + tag + "-" + i, null)).create(); // 2 of 3: no gang
        }
        // as a stale plan would have it: the second pod on an island of which someone else holds a GPU
        ClusterActuator.Gang gang = new ClusterActuator.Gang(new ClusterActuator.GangRef(UUID.randomUUID(), NS, label, true), null,
                List.of(new ClusterActuator.TaskBinding("pod-0", NODE, List.of(0, 1, 2, 3), null),
                        new ClusterActuator.TaskBinding("pod-1", NODE, List.of(4, 5, 6, 7), null)),
                Map.of("pod-0", label + "-0", "pod-1", label + "-1"), 1);
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> actuator.launch(gang))
                .isInstanceOf(dev.gantry.placement.cluster.ClusterActionException.class)
                .hasMessageContaining("allocated to claim team-x/their-gpu-5");
        assertThat(requests().stream().map(r -> r.getMethod() + " " + r.getPath()))
                .as("the first pod's claim was allocated before the second failed")
                .contains("PUT /apis/resource.k8s.io/v1/namespaces/" + NS + "/resourceclaims/rb-" + tag + "-0/status");
        for (int i = 0; i < 2; i++) {
            ResourceClaim c = claim("rb-" + tag + "-" + i);
            assertThat(c).as("the user's claim stays").isNotNull();
            assertThat(c.getStatus() == null || c.getStatus().getAllocation() == null).as("and is not allocated").isTrue();
            assertThat(c.getMetadata().getAnnotations()).as("nor marked").isNullOrEmpty();
            assertThat(bound(label + "-" + i)).isFalse();
            assertThat(pod(label + "-" + i).getMetadata().getDeletionTimestamp()).as("no pod was bound, so none is deleted").isNull();
        }
    }

    /** A pod as the actuator makes it in DRA mode, unbound. */
    private Pod gantryPod(UUID jobId, String podName, ClusterActuator.TaskBinding task) {
        return new PodBuilder()
                .withNewMetadata().withName(podName).withNamespace(NS)
                .addToLabels(KubernetesActuator.LABEL_JOB, jobId.toString()).addToLabels(KubernetesActuator.LABEL_TASK, task.task())
                .addToLabels(KubernetesActuator.LABEL_ATTEMPT, "1").addToLabels(KubernetesActuator.LABEL_MANAGED_BY, "gantry")
                .addToAnnotations(KubernetesActuator.ANNOTATION_GPU_INDICES, task.gpus().stream().map(String::valueOf).collect(Collectors.joining(",")))
                .addToAnnotations(PodProvenance.ANNOTATION, signingKey.provenance().sign(NS, podName, jobId.toString(), 1))
                .endMetadata()
                .withNewSpec().withSchedulerName("gantry").withRestartPolicy("Never")
                .addNewContainer().withName("worker").withImage("trainer:5").withNewResources().addNewClaim().withName("gpus").endClaim()
                .endResources().endContainer()
                .addNewResourceClaim().withName("gpus").withResourceClaimName(DeviceClaims.claimName(podName, task)).endResourceClaim()
                .endSpec().build();
    }

    private long outbox(String subject, UUID jobId) {
        return db.queryLong("select count(*) from outbox_event where subject = ? and subject_id = ?", subject, jobId.toString());
    }

    // --- requests made to the mock API server, and the RBAC rules they must satisfy ---

    private static final List<RecordedRequest> SEEN = new ArrayList<>();

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

    private record Rule(String role, List<String> groups, List<String> resources, List<String> verbs) {
    }

    /** Every rule of every Role and ClusterRole placement declares (the DRA ones are in roles of their own). */
    private static List<Rule> declaredRules() throws Exception {
        Properties p = new Properties();
        try (InputStream in = DraBinderTest.class.getClassLoader().getResourceAsStream("application.properties")) {
            p.load(in);
        }
        List<Rule> rules = new ArrayList<>();
        for (String role : List.of("roles.placement-service", "roles.placement-service-claims", "cluster-roles.placement-service-devices")) {
            String prefix = "quarkus.kubernetes.rbac." + role + ".policy-rules.";
            for (int i = 0; p.containsKey(prefix + i + ".verbs"); i++) {
                rules.add(new Rule(role, split(p.getProperty(prefix + i + ".api-groups", "")), split(p.getProperty(prefix + i + ".resources")),
                        split(p.getProperty(prefix + i + ".verbs"))));
            }
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

    /** And the other way round: every DRA right declared was used by the end of this class (least privilege). */
    @AfterAll
    static void everyDeclaredDraRightWasUsed() throws Exception {
        List<List<String>> used;
        synchronized (SEEN) {
            used = SEEN.stream().map(r -> KubernetesBinderTest.attributes(r.getMethod(), r.getPath())).toList();
        }
        List<Rule> dra = declaredRules().stream().filter(r -> !r.role().equals("roles.placement-service")).toList();
        assertThat(dra).isNotEmpty();
        for (Rule rule : dra) {
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
        List<RecordedRequest> seen = requests();
        assertThat(seen).as("the service talked to the API server").isNotEmpty();
        for (RecordedRequest r : seen) {
            List<String> a = KubernetesBinderTest.attributes(r.getMethod(), r.getPath());
            // a namespaced request needs a rule of a Role or ClusterRole; a cluster-wide one a ClusterRole's
            boolean clusterWide = !r.getPath().contains("/namespaces/") && !a.get(1).equals("namespaces");
            assertThat(rules).as("%s %s -> %s is allowed by a declared rule", r.getMethod(), r.getPath(), a)
                    .anyMatch(rule -> (!clusterWide || rule.role().startsWith("cluster-roles.")) && rule.groups().contains(a.get(0))
                            && rule.resources().contains(a.get(1)) && rule.verbs().contains(a.get(2)));
        }
    }
}
