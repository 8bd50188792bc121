package dev.gantry.placement;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
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
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import jakarta.inject.Inject;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.Test;

/**
 * GPU exclusivity rests on the database, not on the binder's care: a GPU cannot be booked twice
 * whatever writes the allocation, and a placement process that another one has replaced (a newer
 * leadership epoch) cannot bind any more. Its own profile: the last test deposes this instance.
 */
@QuarkusTest
@TestProfile(ExclusivityTest.OwnInstance.class)
class ExclusivityTest {

    public static class OwnInstance implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of("gantry.placement.exclusivity-test", "true");
        }
    }

    private static final String MODEL = "B200-EXCL";
    private static final NodeInfo.Taint TAINT = new NodeInfo.Taint("gantry.dev/test", "exclusivity", "NoSchedule");

    @ConfigProperty(name = "gantry.nats.url")
    String natsUrl;

    @Inject
    TestDatabase db;

    @Inject
    MeterRegistry registry;

    @Inject
    Leadership leadership;

    private void allocate(UUID job, String node, String gpus, Integer milli) {
        db.execute("insert into allocation (job_id, task, node, gpu_indices, gpu_milli, allocated_at, cpu_millis, memory_mib) "
                + "values (?::uuid, 'worker-0', ?, ?::integer[], ?, now(), 0, 0)", job.toString(), node, gpus, milli);
    }

    @Test
    void aWholeGpuCannotBeBookedTwiceNorASharedOneOverItsCapacity() {
        UUID a = UUID.randomUUID();
        allocate(a, "excl-db", "{0,1}", null);
        assertThatThrownBy(() -> allocate(UUID.randomUUID(), "excl-db", "{1,2}", null))
                .hasStackTraceContaining("gpu_booked_at_most_once");
        assertThatThrownBy(() -> allocate(UUID.randomUUID(), "excl-db", "{3,3}", null)).as("one GPU twice in one task")
                .hasStackTraceContaining("gpu_booked_at_most_once");
        assertThatThrownBy(() -> allocate(UUID.randomUUID(), "excl-db", "{0}", 300)).as("a share of a GPU held whole")
                .hasStackTraceContaining("gpu_booked_at_most_once");

        allocate(UUID.randomUUID(), "excl-db", "{4}", 600);
        assertThatThrownBy(() -> allocate(UUID.randomUUID(), "excl-db", "{4}", 500)).hasStackTraceContaining("gpu_booked_at_most_once");
        allocate(UUID.randomUUID(), "excl-db", "{4}", 400); // 600 + 400: exactly one GPU
        assertThat(db.queryLong("select used_milli from gpu_booking where node = 'excl-db' and gpu = 4")).isEqualTo(1000);

        db.execute("delete from allocation where job_id = ?::uuid", a.toString()); // released: its GPUs are free again
        allocate(UUID.randomUUID(), "excl-db", "{1,2}", null);
        assertThat(db.queryLong("select used_milli from gpu_booking where node = 'excl-db' and gpu = 0")).isZero();
        db.execute("delete from allocation where node = 'excl-db'");
        assertThat(db.queryLong("select coalesce(sum(used_milli), 0) from gpu_booking where node = 'excl-db'")).isZero();
    }

    private void allocateMig(UUID job, String node, String devices) {
        db.execute("insert into allocation (job_id, task, node, gpu_indices, mig_profile, mig_devices, allocated_at, cpu_millis, memory_mib) "
                + "values (?::uuid, 'nb-0', ?, '{}', '1g.10gb', ?::text[], now(), 0, 0)", job.toString(), node, devices);
    }

    @Test
    void aMigDeviceCannotBeBookedTwice() {
        UUID a = UUID.randomUUID();
        allocateMig(a, "excl-mig", "{MIG-a,MIG-b}");
        assertThatThrownBy(() -> allocateMig(UUID.randomUUID(), "excl-mig", "{MIG-b}")).hasStackTraceContaining("mig_booking_pkey");
        assertThatThrownBy(() -> allocateMig(UUID.randomUUID(), "excl-mig", "{MIG-c,MIG-c}")).as("one device twice in one task")
                .hasStackTraceContaining("mig_booking_pkey");
        allocateMig(UUID.randomUUID(), "excl-mig-2", "{MIG-b}"); // an id is a device of its node
        allocateMig(UUID.randomUUID(), "excl-mig", "{MIG-c}");
        assertThat(db.queryLong("select count(*) from mig_booking where node = 'excl-mig'")).isEqualTo(3);

        db.execute("delete from allocation where job_id = ?::uuid", a.toString()); // released: its devices are free again
        allocateMig(UUID.randomUUID(), "excl-mig", "{MIG-a}");
        db.execute("delete from allocation where node in ('excl-mig', 'excl-mig-2')");
        assertThat(db.queryLong("select count(*) from mig_booking where node in ('excl-mig', 'excl-mig-2')")).isZero();
    }

    @Test
    void aProcessAnotherHasTakenBindingFromBindsNothing() throws Exception {
        try (TestNats nats = TestNats.connect(natsUrl)) {
            nats.publish(EventEnvelope.of(Subjects.NODES_UPSERTED, "excl-a", new NodeChanged(System.nanoTime(), node("excl-a"))));
        }
        await().atMost(Duration.ofSeconds(20)).until(() -> db.queryLong("select count(*) from node where name = 'excl-a' and not removed") == 1);

        UUID first = UUID.randomUUID();
        try (TestNats nats = TestNats.connect(natsUrl)) {
            nats.publish(job(first));
        }
        await().atMost(Duration.ofSeconds(20)).until(() -> db.queryLong("select count(*) from allocation where job_id = ?::uuid",
                first.toString()) == 1);
        long mine = db.queryLong("select epoch from placement_leader");
        assertThat(mine).isPositive();

        // another placement process starts to bind (a rollout's new replica, a new Lease holder): it takes the next epoch
        db.execute("update placement_leader set epoch = epoch + 1, holder = 'placement-newer', acquired_at = now()");
        UUID second = UUID.randomUUID();
        try (TestNats nats = TestNats.connect(natsUrl)) {
            nats.publish(job(second));
        }
        await().atMost(Duration.ofSeconds(20)).until(() -> registry.find("gantry.placement.fenced.writes").counter() != null
                && registry.find("gantry.placement.fenced.writes").counter().count() >= 1);
        Thread.sleep(2000); // windows of 1 s: had it still bound, it would have by now
        assertThat(db.queryLong("select count(*) from allocation where job_id = ?::uuid", second.toString())).isZero();
        assertThat(db.queryLong("select count(*) from pending_job where job_id = ?::uuid", second.toString())).isEqualTo(1);
        assertThat(leadership.leading()).as("it stops planning and binding").isFalse();
        assertThat(db.queryString("select holder from placement_leader")).isEqualTo("placement-newer");

        try (TestNats nats = TestNats.connect(natsUrl)) { // what the new leader would see: both cancelled
            nats.publish(EventEnvelope.of(Subjects.JOBS_CANCELLED, second.toString(), new JobCancelled(second, "excl", "bob", Instant.now())));
        }
    }

    private static NodeInfo node(String name) {
        return new NodeInfo(name, MODEL, 8, List.of(List.of(0, 1, 2, 3, 4, 5, 6, 7)), List.of(), false,
                128_000, 1_024_000, new NodeInfo.Topology("z1", "s1", "leaf-x"), null, Map.of(), List.of(TAINT), true,
                NodeInfo.Health.READY, 81_920, null, 0, false, Instant.now());
    }

    private static EventEnvelope<JobQueued> job(UUID jobId) {
        JobQueued job = new JobQueued(jobId, "excl-" + jobId.toString().substring(0, 8), "excl", "bob", 100, Instant.now(), null,
                List.of(new JobQueued.TaskGroup("worker", 1, 2, null, 1000, 1000)), List.of(MODEL), null, null, false, Map.of(),
                List.of(new JobQueued.Toleration(TAINT.key(), TAINT.value())), true, false, 1_000_000L);
        return EventEnvelope.of(Subjects.JOBS_QUEUED, jobId.toString(), job);
    }
}
