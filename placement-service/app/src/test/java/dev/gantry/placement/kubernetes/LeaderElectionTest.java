package dev.gantry.placement.kubernetes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.gantry.contracts.events.EventEnvelope;
import dev.gantry.contracts.events.Subjects;
import dev.gantry.contracts.jobs.JobCancelled;
import dev.gantry.contracts.jobs.JobQueued;
import dev.gantry.contracts.nodes.NodeChanged;
import dev.gantry.contracts.nodes.NodeInfo;
import dev.gantry.placement.cluster.Leadership;
import dev.gantry.testing.TestDatabase;
import dev.gantry.testing.TestNats;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.api.model.coordination.v1.LeaseBuilder;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.quarkus.test.kubernetes.client.KubernetesServer;
import io.quarkus.test.kubernetes.client.KubernetesTestServer;
import io.quarkus.test.kubernetes.client.WithKubernetesTestServer;
import jakarta.inject.Inject;
import java.time.Duration;
import java.time.Instant;
import java.time.ZonedDateTime;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.Consumer;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.Test;

/**
 * Another replica holds the placement Lease when this one starts: this one does not lead, plans
 * and binds nothing, and takes over once the holder stops renewing.
 */
@QuarkusTest
@TestProfile(KubernetesModeProfile.class)
@WithKubernetesTestServer(crud = true, setup = LeaderElectionTest.HeldByAnother.class)
class LeaderElectionTest {

    private static final String NS = KubernetesModeProfile.NAMESPACE;
    private static final String LEASE = "placement-service-leader";
    private static final String MODEL = "K8S-LEADER-GPU";

    /** Before the service starts: the Lease is held by "other-replica", freshly renewed, for an hour. */
    public static class HeldByAnother implements Consumer<KubernetesServer> {
        @Override
        public void accept(KubernetesServer server) {
            server.getClient().leases().inNamespace(NS).resource(new LeaseBuilder()
                    .withNewMetadata().withName(LEASE).withNamespace(NS).endMetadata()
                    .withNewSpec().withHolderIdentity("other-replica").withLeaseDurationSeconds(3600)
                    .withAcquireTime(ZonedDateTime.now()).withRenewTime(ZonedDateTime.now()).withLeaseTransitions(0).endSpec()
                    .build()).create();
        }
    }

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

    @Test
    void aStandbyActsOnlyOnceItHoldsTheLease() throws Exception {
        NodeInfo node = new NodeInfo("k8s-leader-a", MODEL, 8, List.of(), List.of(), false, 0, 0,
                new NodeInfo.Topology("z1", "s1", "leaf-l"), null, Map.of(), List.of(), true, NodeInfo.Health.READY, 0, null, 0, false,
                Instant.now());
        UUID jobId = UUID.randomUUID();
        JobQueued job = new JobQueued(jobId, "standby-job", "k8s-test", "kim", 10, Instant.now(), null,
                List.of(new JobQueued.TaskGroup("worker", 1, 2, null, 1000, 1000, "trainer:3", null)), List.of(MODEL), null, null, false,
                Map.of(), List.of(), true, false, 600L);
        try (TestNats nats = TestNats.connect(natsUrl)) {
            nats.publish(EventEnvelope.of(Subjects.NODES_UPSERTED, node.name(), new NodeChanged(System.nanoTime(), node)));
            nats.publish(EventEnvelope.of(Subjects.JOBS_QUEUED, jobId.toString(), job));
        }
        await().atMost(Duration.ofSeconds(20)).until(() ->
                db.queryLong("select count(*) from pending_job where job_id = ?::uuid", jobId.toString()) == 1);

        // a standby: windows go by, nothing is bound and no pod is made
        await().during(Duration.ofSeconds(4)).atMost(Duration.ofSeconds(6)).until(() -> !leadership.leading()
                && db.queryLong("select count(*) from allocation where job_id = ?::uuid", jobId.toString()) == 0
                && server.getClient().pods().inNamespace(NS).list().getItems().isEmpty());
        assertThat(leadership.electionEnabled()).isTrue();

        // the holder stops renewing: its Lease runs out and this replica takes over
        Lease held = server.getClient().leases().inNamespace(NS).withName(LEASE).get();
        held.getSpec().setLeaseDurationSeconds(1);
        held.getSpec().setRenewTime(ZonedDateTime.now().minusMinutes(5));
        server.getClient().leases().inNamespace(NS).resource(held).update();
        await().atMost(Duration.ofSeconds(20)).until(leadership::leading);
        assertThat(server.getClient().leases().inNamespace(NS).withName(LEASE).get().getSpec().getHolderIdentity())
                .isEqualTo(election.identity());
        await().atMost(Duration.ofSeconds(20)).until(() ->
                db.queryLong("select count(*) from allocation where job_id = ?::uuid", jobId.toString()) == 1
                        && server.getClient().pods().inNamespace(NS).withLabel(KubernetesActuator.LABEL_JOB, jobId.toString())
                                .list().getItems().size() == 1);

        try (TestNats nats = TestNats.connect(natsUrl)) {
            nats.publish(EventEnvelope.of(Subjects.JOBS_CANCELLED, jobId.toString(), new JobCancelled(jobId, "k8s-test", "kim", Instant.now())));
        }
        await().atMost(Duration.ofSeconds(20)).until(() ->
                db.queryLong("select count(*) from running_job where job_id = ?::uuid", jobId.toString()) == 0);
    }
}
