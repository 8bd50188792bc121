package dev.gantry.placement.engine.planner;

import static org.assertj.core.api.Assertions.assertThat;

import dev.gantry.placement.engine.domain.Node;
import dev.gantry.placement.engine.domain.PendingJob;
import dev.gantry.placement.engine.domain.Placement;
import dev.gantry.placement.engine.domain.Plan;
import dev.gantry.placement.engine.domain.Queue;
import dev.gantry.placement.engine.domain.RunningJob;
import dev.gantry.placement.engine.domain.RunningTask;
import dev.gantry.placement.engine.domain.Scenario;
import dev.gantry.placement.engine.domain.TaskGroup;
import dev.gantry.placement.engine.domain.TaskPlacement;
import dev.gantry.placement.engine.domain.Unplaced;
import dev.gantry.placement.engine.json.ScenarioCodec;
import dev.gantry.placement.engine.validation.PlanValidator;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A reservation holds the MIG devices its head needs, as it holds whole GPUs: a MIG job at the head of the
 * line that waits for a device is not overtaken, window after window, by later MIG jobs of its profile.
 *
 * <p>The node: GPU 0 whole, GPU 1 in MIG mode as two 1g.10gb devices and one 2g.20gb. At t=1000 {@code ends-soon}
 * holds {@code MIG-1g-a} until t=2000; {@code MIG-1g-b} is free. The head wants both 1g.10gb devices (one pod, two
 * devices); behind it a stream of one-device 1g.10gb jobs that run long.
 */
class MigReservationTest {
    private static final SolverProfile TEST = SolverProfile.FAST.withTimeLimit(Duration.ofSeconds(3));
    private static final long NOW = 1000;
    private static final Node NODE = ScenarioCodec.read("""
            {"format": "gantry-scenario/v1", "name": "node", "nowSeconds": 0,
             "nodes": [{"name": "a100-1", "gpuModel": "A100-SXM4-80GB", "gpus": 2, "cpuMillis": 64000, "memoryMiB": 512000,
               "migDevices": [
                 {"id": "MIG-1g-a", "gpu": 1, "profile": "1g.10gb"},
                 {"id": "MIG-1g-b", "gpu": 1, "profile": "1g.10gb"},
                 {"id": "MIG-2g-a", "gpu": 1, "profile": "2g.20gb"}]}],
             "queues": [{"name": "q"}], "running": [], "pending": []}""").nodes().getFirst();

    private static PendingJob migJob(String name, long submitted, int devices, long runtime) {
        return new PendingJob(name, "q", 0, submitted, List.of(new TaskGroup("srv", 1, devices, 1000, 1000, null, "1g.10gb")), 1,
                null, null, null, false, null, null, false, false, runtime);
    }

    private static RunningJob onDevice(String name, long started, String device) {
        return new RunningJob(name, "q", 0, false, false, false, started,
                List.of(new RunningTask("srv-0", "a100-1", List.of(), 1000, 1000, null, "1g.10gb", List.of(device))));
    }

    private static Scenario scenario(long now, List<RunningJob> running, List<PendingJob> pending) {
        return new Scenario(Scenario.FORMAT, "mig-reservation", now, List.of(NODE), List.of(new Queue("q", 1, 0, null, true, null)),
                running, pending);
    }

    private static Planner planner(String name, Map<String, Long> ends) {
        Planner wrapped = Planners.byName(name);
        return new ReservingPlanner(wrapped, job -> ends.getOrDefault(job, Long.MAX_VALUE));
    }

    private static List<String> devicesOf(Plan plan, String job) {
        return plan.placements().stream().filter(p -> p.job().equals(job)).flatMap(p -> p.tasks().stream())
                .flatMap(t -> t.migDevices().stream()).toList();
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"greedy", "timefold"})
    void aFreeDeviceReservedForTheHeadGoesOnlyToAJobThatEndsInTime(String name) {
        Map<String, Long> ends = Map.of("ends-soon", 2000L);
        List<RunningJob> running = List.of(onDevice("ends-soon", 0, "MIG-1g-a"));
        PendingJob head = migJob("head", 0, 2, 3600);
        PendingJob longOne = migJob("long-1", 10, 1, 10_000);

        Scenario withLong = scenario(NOW, running, List.of(head, longOne));
        Plan plan = planner(name, ends).plan(withLong, TEST);
        assertThat(PlanValidator.validate(withLong, plan)).isEmpty();
        assertThat(plan.metadata()).containsEntry("reservation", "head@2000");
        assertThat(devicesOf(plan, "long-1")).as("MIG-1g-b is the head's from t=2000; long-1 would hold it until t=11000").isEmpty();
        assertThat(plan.unplaced()).extracting(Unplaced::job).contains("head", "long-1");

        Scenario withShort = scenario(NOW, running, List.of(head, migJob("short", 5, 1, 500), longOne));
        Plan second = planner(name, ends).plan(withShort, TEST);
        assertThat(PlanValidator.validate(withShort, second)).isEmpty();
        assertThat(devicesOf(second, "short")).as("gone by t=1500: it may use the reserved device until then").containsExactly("MIG-1g-b");
        assertThat(devicesOf(second, "long-1")).isEmpty();
    }

    /**
     * A window every 500 s, each bringing one more 1g.10gb job that runs 10000 s; jobs end at their estimates. The
     * head starts at its reservation, t=2000; without it the stream keeps taking each device freed, past t=11000
     * when the first of the stream ends.
     */
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"greedy", "timefold"})
    void aMigHeadIsNotOvertakenForeverByLaterJobsOfItsProfile(String name) {
        assertThat(startOfHead(name, true)).as("the head starts when ends-soon frees MIG-1g-a").isEqualTo(2000L);
        assertThat(startOfHead(name, false)).as("without the reservation the stream takes every device it frees").isNull();
    }

    /** When the head starts in the simulation (null: not by t=13000). */
    private static Long startOfHead(String plannerName, boolean reserving) {
        Map<String, Long> ends = new HashMap<>(Map.of("ends-soon", 2000L));
        List<RunningJob> running = new ArrayList<>(List.of(onDevice("ends-soon", 0, "MIG-1g-a")));
        List<PendingJob> pending = new ArrayList<>(List.of(migJob("head", 0, 2, 3600)));
        int arrivals = 0;
        for (long now = NOW; now <= 13_000; now += 500) {
            long t = now;
            running.removeIf(r -> ends.getOrDefault(r.name(), Long.MAX_VALUE) <= t);
            pending.add(migJob("stream-" + ++arrivals, now, 1, 10_000));
            Scenario sc = scenario(now, List.copyOf(running), List.copyOf(pending));
            Planner planner = reserving ? planner(plannerName, ends) : Planners.byName(plannerName);
            Plan plan = planner.plan(sc, TEST);
            assertThat(PlanValidator.validate(sc, plan)).as("t=" + now).isEmpty();
            for (Placement p : plan.placements()) {
                PendingJob job = pending.stream().filter(j -> j.name().equals(p.job())).findFirst().orElseThrow();
                if (job.name().equals("head")) {
                    return now;
                }
                pending.remove(job);
                List<RunningTask> tasks = new ArrayList<>();
                for (TaskPlacement tp : p.tasks()) {
                    tasks.add(new RunningTask(tp.task(), tp.node(), tp.gpus(), 1000, 1000, null, "1g.10gb", tp.migDevices()));
                }
                running.add(new RunningJob(job.name(), "q", 0, false, false, false, now, tasks));
                ends.put(job.name(), now + job.estimatedRuntimeSeconds());
            }
        }
        return null;
    }
}
