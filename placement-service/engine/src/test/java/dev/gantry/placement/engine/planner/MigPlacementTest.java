package dev.gantry.placement.engine.planner;

import static org.assertj.core.api.Assertions.assertThat;

import dev.gantry.placement.engine.domain.Placement;
import dev.gantry.placement.engine.domain.Plan;
import dev.gantry.placement.engine.domain.Scenario;
import dev.gantry.placement.engine.domain.TaskPlacement;
import dev.gantry.placement.engine.domain.Unplaced;
import dev.gantry.placement.engine.json.PlanCodec;
import dev.gantry.placement.engine.json.ScenarioCodec;
import dev.gantry.placement.engine.packing.WorkloadMix;
import dev.gantry.placement.engine.validation.PlanMetrics;
import dev.gantry.placement.engine.validation.PlanValidator;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * MIG devices as a resource of their own (issue 22): a task group with {@code migProfile} asks for
 * {@code gpusPerReplica} MIG devices of that profile; the planners give it free devices of exactly that
 * profile, never a GPU in MIG mode whole, and say why when none is free. The node is an A100 whose GPU 1 is
 * partitioned as NVIDIA's mig-parted "all-balanced" does (2 x 1g.10gb, 1 x 2g.20gb, 1 x 3g.40gb) and whose
 * GPU 0 is whole. check_plan.py does not know MIG, so these windows are not among the shared fixtures.
 */
class MigPlacementTest {
    private static final SolverProfile TEST = SolverProfile.FAST.withTimeLimit(Duration.ofSeconds(3));

    private static final String NODE = """
            {"name": "a100-1", "gpuModel": "A100-SXM4-80GB", "gpus": 2, "cpuMillis": 64000, "memoryMiB": 512000,
             "nvlinkIslands": [[0, 1]],
             "migDevices": [
               {"id": "MIG-1g-a", "gpu": 1, "profile": "1g.10gb"},
               {"id": "MIG-1g-b", "gpu": 1, "profile": "1g.10gb"},
               {"id": "MIG-2g-a", "gpu": 1, "profile": "2g.20gb"},
               {"id": "MIG-3g-a", "gpu": 1, "profile": "3g.40gb"}]}""";

    private static Scenario scenario(String queues, String running, String pending) {
        return ScenarioCodec.read("""
                {"format": "gantry-scenario/v1", "name": "mig", "nowSeconds": 1000,
                 "nodes": [%s], "queues": [%s], "running": [%s], "pending": [%s]}""".formatted(NODE, queues, running, pending));
    }

    private static Plan plan(String planner, Scenario sc) {
        Plan plan = planner.equals("fast-path") ? Planners.fastPath(new WorkloadMix()).plan(sc, TEST) : Planners.byName(planner).plan(sc, TEST);
        assertThat(PlanValidator.validate(sc, plan)).as(planner + " plan valid").isEmpty();
        assertThat(ScenarioCodec.read(ScenarioCodec.write(sc))).as("the scenario round-trips").isEqualTo(sc);
        assertThat(PlanCodec.read(PlanCodec.write(plan)).placements()).as("the plan round-trips").isEqualTo(plan.placements());
        return plan;
    }

    private static TaskPlacement task(Plan plan, String job) {
        Placement p = plan.placements().stream().filter(x -> x.job().equals(job)).findFirst()
                .orElseThrow(() -> new AssertionError(job + " not placed: " + plan.unplaced()));
        return p.tasks().getFirst();
    }

    private static String reason(Plan plan, String job) {
        return plan.unplaced().stream().filter(u -> u.job().equals(job)).map(Unplaced::reason).findFirst()
                .orElseThrow(() -> new AssertionError(job + " placed"));
    }

    private static String job(String name, String group) {
        return """
                {"name": "%s", "queue": "q", "priority": 100, "submittedAtSeconds": 0, "taskGroups": [%s]}""".formatted(name, group);
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"timefold", "greedy", "fifo", "fast-path"})
    void aMigRequestGetsAMigDeviceOfTheRightProfile(String planner) {
        Scenario sc = scenario("{\"name\": \"q\"}", "",
                job("inference", "{\"name\": \"srv\", \"replicas\": 1, \"gpusPerReplica\": 1, \"migProfile\": \"3g.40gb\", \"cpuMillis\": 1000}")
                        + "," + job("notebooks", "{\"name\": \"nb\", \"replicas\": 2, \"gpusPerReplica\": 1, \"migProfile\": \"1g.10gb\"}"));
        Plan plan = plan(planner, sc);
        TaskPlacement srv = task(plan, "inference");
        assertThat(srv.migDevices()).containsExactly("MIG-3g-a");
        assertThat(srv.gpus()).as("a MIG task holds no GPU index").isEmpty();
        Placement nb = plan.placements().stream().filter(p -> p.job().equals("notebooks")).findFirst().orElseThrow();
        assertThat(nb.tasks()).flatExtracting(TaskPlacement::migDevices).containsExactlyInAnyOrder("MIG-1g-a", "MIG-1g-b");
        assertThat(PlanMetrics.of(sc, plan).placedGpus()).as("a device counts its slices of seven: 3/7 + 2 x 1/7")
                .isEqualTo(0.428 + 0.142 + 0.142, org.assertj.core.data.Offset.offset(0.001));
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"timefold", "greedy"})
    void noFreeDeviceOfTheProfileLeavesTheJobPendingWithAClearReason(String planner) {
        String running = """
                {"name": "holder", "queue": "q", "priority": 100, "preemptible": false,
                 "tasks": [{"name": "srv-0", "node": "a100-1", "gpus": [], "migProfile": "3g.40gb", "migDevices": ["MIG-3g-a"]}]}""";
        Scenario sc = scenario("{\"name\": \"q\"}", running,
                job("second", "{\"name\": \"srv\", \"replicas\": 1, \"gpusPerReplica\": 1, \"migProfile\": \"3g.40gb\"}")
                        + "," + job("odd", "{\"name\": \"srv\", \"replicas\": 1, \"gpusPerReplica\": 1, \"migProfile\": \"4g.40gb\"}")
                        + "," + job("greedy-pod", "{\"name\": \"srv\", \"replicas\": 1, \"gpusPerReplica\": 3, \"migProfile\": \"1g.10gb\"}"));
        Plan plan = plan(planner, sc);
        assertThat(reason(plan, "second")).isEqualTo("needs 1 MIG device 3g.40gb (srv: 1 x 1); the eligible nodes have 0 free of 1");
        assertThat(reason(plan, "odd")).isEqualTo("no eligible node has MIG devices of profile 4g.40gb (they have 1g.10gb, 2g.20gb, 3g.40gb)");
        assertThat(reason(plan, "greedy-pod"))
                .isEqualTo("each pod (srv) needs 3 MIG devices 1g.10gb on one node; the most any eligible node has is 2: use more pods with fewer devices");
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"timefold", "greedy", "fifo", "fast-path"})
    void wholeGpuJobsAvoidTheGpuInMigMode(String planner) {
        Scenario sc = scenario("{\"name\": \"q\"}", "",
                job("one", "{\"name\": \"w\", \"replicas\": 1, \"gpusPerReplica\": 1}")
                        + "," + job("two", "{\"name\": \"w\", \"replicas\": 1, \"gpusPerReplica\": 2}"));
        Plan plan = plan(planner, sc);
        assertThat(task(plan, "one").gpus()).containsExactly(0);
        assertThat(task(plan, "one").migDevices()).isEmpty();
        assertThat(reason(plan, "two")).as("GPU 0 went to the one-GPU job; GPU 1 is in MIG mode")
                .isEqualTo("gang needs 2 GPUs; the eligible nodes have 0 free");
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"timefold", "greedy"})
    void aMigDeviceTakenByGantryIsOccupiedAndItsTaskCountsTowardTheQueue(String planner) {
        // queue capability 1 GPU: the running 3g device (428) and a whole GPU would be 1428
        String running = """
                {"name": "holder", "queue": "q", "priority": 100, "preemptible": false,
                 "tasks": [{"name": "srv-0", "node": "a100-1", "gpus": [], "migProfile": "3g.40gb", "migDevices": ["MIG-3g-a"]}]}""";
        Scenario sc = scenario("{\"name\": \"q\", \"capabilityGpus\": 1}", running,
                job("small", "{\"name\": \"nb\", \"replicas\": 2, \"gpusPerReplica\": 1, \"migProfile\": \"1g.10gb\"}")
                        + "," + job("whole", "{\"name\": \"w\", \"replicas\": 1, \"gpusPerReplica\": 1}"));
        Plan plan = plan(planner, sc);
        Placement small = plan.placements().stream().filter(p -> p.job().equals("small")).findFirst().orElseThrow();
        assertThat(small.tasks()).flatExtracting(TaskPlacement::migDevices).containsExactlyInAnyOrder("MIG-1g-a", "MIG-1g-b");
        assertThat(reason(plan, "whole")).isEqualTo("queue q is at its capability: it holds 0.712 of 1 GPUs and the gang needs 1 more");
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"timefold"})
    void aHigherPriorityMigJobPreemptsALowerOneOnItsDevice(String planner) {
        String running = """
                {"name": "low", "queue": "q", "priority": 10, "preemptible": true, "startedAtSeconds": 900,
                 "tasks": [{"name": "srv-0", "node": "a100-1", "gpus": [], "migProfile": "3g.40gb", "migDevices": ["MIG-3g-a"]}]}""";
        Scenario sc = scenario("{\"name\": \"q\"}", running,
                """
                {"name": "high", "queue": "q", "priority": 500, "submittedAtSeconds": 0,
                 "taskGroups": [{"name": "srv", "replicas": 1, "gpusPerReplica": 1, "migProfile": "3g.40gb"}]}""");
        Plan plan = plan(planner, sc);
        assertThat(task(plan, "high").migDevices()).containsExactly("MIG-3g-a");
        assertThat(plan.preemptions()).extracting(p -> p.job()).containsExactly("low");
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"timefold", "greedy"})
    void aSharingJobAvoidsTheGpuInMigModeToo(String planner) {
        Scenario sc = ScenarioCodec.read("""
                {"format": "gantry-scenario/v1", "name": "mig-sharing",
                 "nodes": [{"name": "a100-1", "gpuModel": "A100-SXM4-80GB", "gpus": 2, "gpuSharing": true,
                            "migDevices": [{"id": "MIG-7g", "gpu": 0, "profile": "7g.80gb"}]}],
                 "queues": [{"name": "q"}], "running": [],
                 "pending": [{"name": "share", "queue": "q", "taskGroups": [{"name": "s", "replicas": 2, "gpusPerReplica": 1, "gpuMilli": 500}]}]}""");
        Plan plan = plan(planner, sc);
        assertThat(plan.placements().getFirst().tasks()).extracting(TaskPlacement::gpus).containsOnly(List.of(1));
    }
}
