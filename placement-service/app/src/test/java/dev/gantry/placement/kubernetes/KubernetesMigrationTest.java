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
import dev.gantry.placement.cluster.Leadership;
import dev.gantry.placement.DisruptionBudgetReset;
import dev.gantry.testing.TestDatabase;
import dev.gantry.testing.TestNats;
import io.fabric8.kubernetes.api.model.Binding;
import io.fabric8.kubernetes.api.model.Pod;
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
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Defragmentation in kubernetes mode, against the fabric8 mock server (CRUD) with the real
 * PostgreSQL and JetStream: two 8-GPU nodes with 4 + 4 GPUs free between migratable 2-GPU jobs
 * whose pods run; an 8-GPU job arrives. Two jobs' pods are evicted with their checkpoint grace,
 * then made again (a new attempt) and bound on the other node, and the 8-GPU job's pod is bound on
 * the node they left.
 */
@QuarkusTest
@TestProfile(KubernetesModeProfile.class)
@WithKubernetesTestServer(crud = true)
class KubernetesMigrationTest {

    private static final String NS = KubernetesModeProfile.NAMESPACE;
    private static final String MODEL = "K8S-MIGRATE-GPU";
    private static final NodeInfo.Taint TAINT = new NodeInfo.Taint("gantry.dev/test", "k8s-migration", "NoSchedule");
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
    PodWatcher watcher;

    private KubernetesClient driver;
    private final List<UUID> started = new ArrayList<>();
    private final List<RecordedRequest> seen = new ArrayList<>();

    private static NodeInfo node(String name) {
        return new NodeInfo(name, MODEL, 8, List.of(List.of(0, 1, 2, 3, 4, 5, 6, 7)), List.of(), false,
                128_000, 1_024_000, new NodeInfo.Topology("z1", "s1", "leaf-km"), null, Map.of(), List.of(TAINT), true,
                NodeInfo.Health.READY, 81_920, null, 0, false, Instant.now());
    }

    private static JobQueued spec(UUID jobId, int gpus, boolean migratable) {
        return new JobQueued(jobId, "mv-" + jobId.toString().substring(0, 6), "k8s-migration", "kim", 0, Instant.now().minusSeconds(7200),
                null, List.of(new JobQueued.TaskGroup("worker", 1, gpus, null, 1000, 1000, "trainer:4", null)), List.of(MODEL), null,
                null, false, Map.of(), List.of(new JobQueued.Toleration(TAINT.key(), TAINT.value())), true, migratable, 600L, 1, migratable);
    }

    /** One GPU in MIG mode as two 1g.10gb devices ({@code <node>-1g-0}, {@code <node>-1g-1}), as the device plugin's mixed strategy shows it. */
    private static NodeInfo migNode(String name) {
        List<NodeInfo.MigDevice> devices = List.of(new NodeInfo.MigDevice(name + "-1g-0", 0, "1g.10gb", null),
                new NodeInfo.MigDevice(name + "-1g-1", 0, "1g.10gb", null));
        return new NodeInfo(name, MODEL, 1, List.of(), List.of(), false, 64_000, 512_000, new NodeInfo.Topology("z1", "s1", "leaf-km"),
                null, Map.of(), List.of(TAINT), true, NodeInfo.Health.READY, 81_920, new NodeInfo.Mig("mixed", Map.of("1g.10gb", 2), devices),
                0, false, Instant.now());
    }

    private static JobQueued migSpec(UUID jobId, int devices, boolean migratable) {
        return new JobQueued(jobId, "mig-" + jobId.toString().substring(0, 6), "k8s-migration", "kim", 0, Instant.now().minusSeconds(7200),
                null, List.of(new JobQueued.TaskGroup("worker", 1, devices, null, 1000, 1000, "server:2", null, null, null, "1g.10gb")),
                List.of(MODEL), null, null, false, Map.of(), List.of(new JobQueued.Toleration(TAINT.key(), TAINT.value())), true, migratable,
                600L, 1, migratable);
    }

    /** A job on one 1g.10gb MIG device of {@code node}, recorded as placed an hour ago, its pod not made yet (the sweep launches it). */
    private UUID runningOnMig(String node, String device, boolean migratable) {
        UUID jobId = UUID.randomUUID();
        return recordPlaced(jobId, migSpec(jobId, 1, migratable), node, "{}", "1g.10gb", "{" + device + "}");
    }

    private String migDevicesOf(UUID jobId) {
        return db.queryString("select string_agg(d, ',' order by d) from allocation, unnest(mig_devices) d where job_id = ?::uuid",
                jobId.toString());
    }

    @Test
    void aJobOnAMigDeviceIsMovedToAFreeDeviceOfItsProfileToMakeRoomForTwo() throws Exception {
        String tag = UUID.randomUUID().toString().substring(0, 4);
        String a = "k8s-mig-a-" + tag;
        String b = "k8s-mig-b-" + tag;
        try (TestNats nats = TestNats.connect(natsUrl)) {
            for (String name : List.of(a, b)) {
                nats.publish(EventEnvelope.of(Subjects.NODES_UPSERTED, name, new NodeChanged(System.nanoTime(), migNode(name))));
            }
        }
        try {
            await().atMost(Duration.ofSeconds(20)).until(() -> db.queryLong("select count(*) from node where name in (?, ?) and not removed",
                    a, b) == 2);
            // one device taken on each node: a pod asking for two devices fits on neither until one of them moves
            UUID movable = runningOnMig(a, a + "-1g-0", true);
            UUID pinned = runningOnMig(b, b + "-1g-0", false);
            watcher.sweepSoon();
            await().atMost(Duration.ofSeconds(30)).until(() -> launched(movable, 1) && launched(pinned, 1));
            String firstPod = podsOf(movable).getFirst().getMetadata().getName();

            UUID pair = UUID.randomUUID();
            started.add(pair);
            try (TestNats nats = TestNats.connect(natsUrl)) {
                nats.publish(EventEnvelope.of(Subjects.JOBS_QUEUED, pair.toString(), migSpec(pair, 2, false)));
            }
            await().atMost(Duration.ofSeconds(40)).until(() -> outbox(Subjects.PLACEMENTS_BOUND, pair) == 1 && launched(pair, 1));
            assertThat(outbox(Subjects.PLACEMENTS_MIGRATED, movable)).as("stopping, then moved").isEqualTo(2);
            assertThat(db.queryString("select envelope from outbox_event where subject = ? and subject_id = ? and envelope like '%moved%'",
                    Subjects.PLACEMENTS_MIGRATED, movable.toString())).contains(b + "-1g-1");
            assertThat(evicted(firstPod)).as("its pod was evicted with its grace").isTrue();
            await().atMost(Duration.ofSeconds(20)).until(() -> launched(movable, 2));
            assertThat(nodeOf(movable)).isEqualTo(b);
            assertThat(migDevicesOf(movable)).as("the free device of its profile on the other node").isEqualTo(b + "-1g-1");
            assertThat(db.queryString("select mig_profile from allocation where job_id = ?::uuid", movable.toString())).isEqualTo("1g.10gb");
            Pod moved = podsOf(movable).stream()
                    .filter(p -> "2".equals(p.getMetadata().getLabels().get(KubernetesActuator.LABEL_ATTEMPT))).findFirst().orElseThrow();
            assertThat(moved.getSpec().getContainers().getFirst().getResources().getLimits())
                    .containsEntry("nvidia.com/mig-1g.10gb", new io.fabric8.kubernetes.api.model.Quantity("1"))
                    .doesNotContainKey("nvidia.com/gpu");
            assertThat(moved.getMetadata().getAnnotations()).containsEntry(KubernetesActuator.ANNOTATION_MIG_DEVICES, b + "-1g-1");
            assertThat(driver.bindings().inNamespace(NS).withName(moved.getMetadata().getName()).get().getTarget().getName()).isEqualTo(b);

            assertThat(nodeOf(pair)).isEqualTo(a);
            assertThat(migDevicesOf(pair)).isEqualTo(a + "-1g-0," + a + "-1g-1");
            assertThat(nodeOf(pinned)).isEqualTo(b);
            assertThat(migDevicesOf(pinned)).isEqualTo(b + "-1g-0");
        } finally {
            try (TestNats nats = TestNats.connect(natsUrl)) {
                for (String name : List.of(a, b)) {
                    nats.publish(EventEnvelope.of(Subjects.NODES_REMOVED, name,
                            new dev.gantry.contracts.nodes.NodeRemoved(System.nanoTime(), name)));
                }
            }
        }
    }

    @BeforeEach
    void setUp() throws Exception {
        DisruptionBudgetReset.forgetEarlierMoves(db);
        driver = new KubernetesClientBuilder().withConfig(new ConfigBuilder(server.getClient().getConfiguration())
                .withUserAgent(TEST_AGENT).build()).build();
        try (TestNats nats = TestNats.connect(natsUrl)) {
            for (String name : List.of("k8s-m1", "k8s-m2")) {
                nats.publish(EventEnvelope.of(Subjects.NODES_UPSERTED, name, new NodeChanged(System.nanoTime(), node(name))));
            }
        }
        await().atMost(Duration.ofSeconds(20)).until(() ->
                db.queryLong("select count(*) from node where name in ('k8s-m1', 'k8s-m2') and not removed") == 2);
        await().atMost(Duration.ofSeconds(20)).until(leadership::leading);
    }

    @AfterEach
    void tearDown() throws Exception {
        try (TestNats nats = TestNats.connect(natsUrl)) {
            for (UUID id : started) {
                nats.publish(EventEnvelope.of(Subjects.JOBS_CANCELLED, id.toString(), new JobCancelled(id, "k8s-migration", "kim", Instant.now())));
            }
        }
        await().atMost(Duration.ofSeconds(60)).until(() -> started.stream().allMatch(id ->
                db.queryLong("select count(*) from running_job where job_id = ?::uuid", id.toString())
                        + db.queryLong("select count(*) from pending_job where job_id = ?::uuid", id.toString()) == 0));
        driver.close();
    }

    /** A migratable 2-GPU job recorded as placed on {@code node}'s {@code gpus}, its pod not made yet (the sweep launches it). */
    private UUID running(String node, String gpus) {
        UUID jobId = UUID.randomUUID();
        return recordPlaced(jobId, spec(jobId, 2, true), node, gpus, null, "{}");
    }

    /** The job recorded as placed an hour ago on {@code node}'s GPUs or MIG devices (SQL arrays), its gang not launched yet. */
    private UUID recordPlaced(UUID jobId, JobQueued spec, String node, String gpus, String migProfile, String migDevices) {
        started.add(jobId);
        db.execute("""
                with running as (
                    insert into running_job (job_id, queue, priority, spec, submitted_at, bound_at, due_at)
                    values (?::uuid, 'k8s-migration', 0, ?, now() - interval '2 hours', now() - interval '1 hour', '9999-12-31')),
                allocated as (
                    insert into allocation (job_id, task, node, gpu_indices, mig_profile, mig_devices, allocated_at, cpu_millis, memory_mib)
                    values (?::uuid, 'worker-0', ?, ?::integer[], cast(? as text), ?::text[], now() - interval '1 hour', 1000, 1000))
                insert into cluster_gang (job_id, namespace, gang_label, user_pods, pods, attempt, created_at, launched_at)
                values (?::uuid, ?, ?, false, '{}', 1, now() - interval '1 hour', null)
                """, jobId.toString(), EventCodec.toJson(spec), jobId.toString(), node, gpus, migProfile, migDevices, jobId.toString(), NS,
                jobId.toString());
        return jobId;
    }

    private boolean launched(UUID jobId, int attempt) {
        return db.queryLong("select count(*) from cluster_gang where job_id = ?::uuid and attempt = ? and launched_at is not null",
                jobId.toString(), attempt) == 1;
    }

    private List<Pod> podsOf(UUID jobId) {
        return driver.pods().inNamespace(NS).withLabel(KubernetesActuator.LABEL_JOB, jobId.toString()).list().getItems();
    }

    private String nodeOf(UUID jobId) {
        return db.queryString("select string_agg(distinct node, ',') from allocation where job_id = ?::uuid", jobId.toString());
    }

    private long outbox(String subject, UUID jobId) {
        return db.queryLong("select count(*) from outbox_event where subject = ? and subject_id = ?", subject, jobId.toString());
    }

    private List<RecordedRequest> requests() throws InterruptedException {
        for (RecordedRequest r; (r = server.getKubernetesMockServer().takeRequest(50, TimeUnit.MILLISECONDS)) != null;) {
            if (!TEST_AGENT.equals(r.getHeader("User-Agent"))) {
                seen.add(r);
            }
        }
        return List.copyOf(seen);
    }

    private boolean evicted(String pod) throws InterruptedException {
        return requests().stream().anyMatch(r -> r.getMethod().equals("POST")
                && r.getPath().equals("/api/v1/namespaces/" + NS + "/pods/" + pod + "/eviction"));
    }

    @Test
    void twoJobsArePodsEvictedWithGraceThenRelaunchedOnTheOtherNodeAndTheEightGpuJobIsBound() throws Exception {
        List<UUID> small = List.of(running("k8s-m1", "{0,1}"), running("k8s-m1", "{4,5}"),
                running("k8s-m2", "{2,3}"), running("k8s-m2", "{6,7}"));
        watcher.sweepSoon();
        await().atMost(Duration.ofSeconds(30)).until(() -> small.stream().allMatch(id -> launched(id, 1) && podsOf(id).size() == 1));
        Map<UUID, String> firstPods = new java.util.HashMap<>();
        small.forEach(id -> firstPods.put(id, podsOf(id).getFirst().getMetadata().getName()));

        UUID wide = UUID.randomUUID();
        started.add(wide);
        try (TestNats nats = TestNats.connect(natsUrl)) {
            nats.publish(EventEnvelope.of(Subjects.JOBS_QUEUED, wide.toString(), spec(wide, 8, false)));
        }
        await().atMost(Duration.ofSeconds(40)).until(() -> outbox(Subjects.PLACEMENTS_BOUND, wide) == 1 && launched(wide, 1));
        List<UUID> moved = small.stream().filter(id -> outbox(Subjects.PLACEMENTS_MIGRATED, id) > 0).toList();
        assertThat(moved).hasSize(2);
        String emptied = nodeOf(wide);
        for (UUID id : moved) {
            assertThat(evicted(firstPods.get(id))).as("the pod of job %s was evicted (with its grace)", id).isTrue();
            await().atMost(Duration.ofSeconds(20)).until(() -> launched(id, 2));
            assertThat(nodeOf(id)).isNotEqualTo(emptied);
            List<Pod> pods = podsOf(id);
            assertThat(pods).singleElement().satisfies(p -> {
                assertThat(p.getMetadata().getLabels()).containsEntry(KubernetesActuator.LABEL_ATTEMPT, "2");
                Binding binding = driver.bindings().inNamespace(NS).withName(p.getMetadata().getName()).get();
                assertThat(binding.getTarget().getName()).isEqualTo(nodeOf(id));
            });
        }
        Pod widePod = podsOf(wide).getFirst();
        assertThat(driver.bindings().inNamespace(NS).withName(widePod.getMetadata().getName()).get().getTarget().getName()).isEqualTo(emptied);
        assertThat(small.stream().filter(id -> !moved.contains(id)).allMatch(id -> launched(id, 1) && podsOf(id).size() == 1))
                .as("the jobs not moved keep their pods").isTrue();
    }
}
