package dev.gantry.placement.engine.json;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.gantry.placement.engine.TestScenarios;
import dev.gantry.placement.engine.domain.GpuTopology;
import dev.gantry.placement.engine.domain.NetworkLevel;
import dev.gantry.placement.engine.domain.Scenario;
import java.nio.file.Files;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class ScenarioCodecTest {

    private static final String SEED = TestScenarios.json("seed-volcano-example");

    @Test
    void readsEveryExampleWithDefaults() {
        for (String name : TestScenarios.EXAMPLES) {
            Scenario s = TestScenarios.load(name);
            assertThat(s.name()).isEqualTo(name);
        }
        Scenario seed = ScenarioCodec.read(SEED);
        assertThat(seed.pending().getFirst().minAvailable()).isEqualTo(2);
        assertThat(seed.pending().getFirst().gpuTopology()).isEqualTo(GpuTopology.ANY);
        assertThat(seed.pending().getFirst().network().required()).isEqualTo(NetworkLevel.ANY);
        assertThat(seed.queues().getFirst().capabilityGpus()).isEqualTo(8);
    }

    @Test
    void sharedExamplesMatchTheCopiedFixtures() throws Exception {
        if (!Files.isDirectory(TestScenarios.SHARED_EXAMPLES)) {
            return; // the outside folder is optional; the copies are the fixtures
        }
        for (String name : TestScenarios.EXAMPLES) {
            String shared = Files.readString(TestScenarios.SHARED_EXAMPLES.resolve(name + ".json"));
            assertThat(ScenarioCodec.read(shared)).isEqualTo(TestScenarios.load(name));
        }
    }

    @Test
    void writeThenReadIsIdentity() {
        for (String name : TestScenarios.EXAMPLES) {
            Scenario s = TestScenarios.load(name);
            assertThat(ScenarioCodec.read(ScenarioCodec.write(s))).isEqualTo(s);
        }
    }

    static Stream<Arguments> badInputs() {
        return Stream.of(
                bad("not json", s -> "{\"format\": ", "$: not valid JSON"),
                bad("not an object", s -> "[1,2]", "$: must be a JSON object"),
                bad("wrong format", s -> s.replace("gantry-scenario/v1", "gantry-scenario/v2"), "format: must be gantry-scenario/v1"),
                bad("missing format", s -> s.replace("\"format\": \"gantry-scenario/v1\",", ""), "format: is required"),
                bad("unknown queue", s -> s.replaceFirst("\"queue\": \"normal\",(\\s*)\"priority\": 1000", "\"queue\": \"nope\",$1\"priority\": 1000"),
                        "pending[0].queue: unknown queue nope"),
                bad("duplicate node", s -> s.replace("\"dgx-02\"", "\"dgx-01\""), "nodes[1].name: duplicate node name dgx-01"),
                bad("duplicate queue", s -> s.replace("\"name\": \"urgent\"", "\"name\": \"normal\""), "queues[1].name: duplicate queue name"),
                bad("duplicate job", s -> s.replace("\"tf-dist-train\"", "\"notebook-7\""), "pending[0].name: duplicate job name notebook-7"),
                bad("bad name", s -> s.replace("\"dgx-02\"", "\"DGX_02\""), "nodes[1].name: must be a DNS subdomain"),
                bad("name too long", s -> s.replace("\"dgx-02\"", "\"" + "a".repeat(254) + "\""), "nodes[1].name: must be a DNS subdomain"),
                bad("negative gpus", s -> s.replaceFirst("\"gpus\": 8", "\"gpus\": -1"), "nodes[0].gpus: must be 0..64"),
                bad("negative guarantee", s -> s.replace("\"guaranteeGpus\": 0,\n   \"capabilityGpus\": 8", "\"guaranteeGpus\": -2,\n   \"capabilityGpus\": 8"),
                        "queues[0].guaranteeGpus: must be >= 0"),
                bad("too many gpus", s -> s.replaceFirst("\"gpus\": 8", "\"gpus\": 65"), "nodes[0].gpus: must be 0..64"),
                bad("gpusPerReplica", s -> s.replace("\"gpusPerReplica\": 2", "\"gpusPerReplica\": 65"),
                        "pending[0].taskGroups[1].gpusPerReplica: must be 0..64"),
                bad("zero replicas", s -> s.replace("\"replicas\": 1,\n     \"gpusPerReplica\": 2", "\"replicas\": 0,\n     \"gpusPerReplica\": 2"),
                        "pending[0].taskGroups[1].replicas: must be 1..10000"),
                bad("too many pods", s -> s.replace("\"replicas\": 1,\n     \"gpusPerReplica\": 2", "\"replicas\": 10000,\n     \"gpusPerReplica\": 2"),
                        "pending[0].taskGroups: a job has at most 10000 pods"),
                bad("negative cpu", s -> s.replaceFirst("\"cpuMillis\": 224000", "\"cpuMillis\": -1"), "nodes[0].cpuMillis: must be >= 0"),
                bad("negative memory", s -> s.replace("\"memoryMiB\": 64000", "\"memoryMiB\": -5"), "pending[0].taskGroups[1].memoryMiB: must be >= 0"),
                bad("priority beyond 32 bits", s -> s.replace("\"priority\": 1000", "\"priority\": 3000000000"), "pending[0].priority: must be a 32-bit integer"),
                bad("priority not integer", s -> s.replace("\"priority\": 1000", "\"priority\": 1.5"), "pending[0].priority: must be an integer"),
                bad("overlapping islands", s -> s.replaceFirst("\\[\\s*0,\\s*1,\\s*2,\\s*3,\\s*4,\\s*5,\\s*6,\\s*7\\s*]", "[0,1,2,3],[3,4,5,6,7]"),
                        "nodes[0].nvlinkIslands[1]: GPU index 3 is in more than one group"),
                bad("island index off node", s -> s.replaceFirst("\\[\\s*0,\\s*1,\\s*2,\\s*3,\\s*4,\\s*5,\\s*6,\\s*7\\s*]", "[0,1,2,3,4,5,6,7,8]"),
                        "nodes[0].nvlinkIslands[0]: GPU index 8 is not on the node"),
                bad("running gpu off node", s -> s.replace("\"gpus\": [\n      0\n     ]", "\"gpus\": [9]"),
                        "running[0].tasks[0].gpus: GPU index 9 is not on node dgx-01"),
                bad("running unknown node", s -> s.replace("\"node\": \"dgx-01\"", "\"node\": \"dgx-09\""), "running[0].tasks[0].node: unknown node dgx-09"),
                bad("gpuMilli too big", s -> s.replace("\"gpusPerReplica\": 1,", "\"gpusPerReplica\": 1, \"gpuMilli\": 1000,"),
                        "pending[0].taskGroups[0].gpuMilli: must be 1..999"),
                bad("gpuMilli needs one gpu", s -> s.replace("\"gpusPerReplica\": 2,", "\"gpusPerReplica\": 2, \"gpuMilli\": 500,"),
                        "pending[0].taskGroups[1].gpusPerReplica: must be 1 when gpuMilli is given"),
                bad("minAvailable too big", s -> s.replace("\"minAvailable\": 2", "\"minAvailable\": 3"), "pending[0].minAvailable: must be 1..2"),
                bad("minAvailable zero", s -> s.replace("\"minAvailable\": 2", "\"minAvailable\": 0"), "pending[0].minAvailable: must be 1..10000"),
                bad("bad network level", s -> s.replace("\"minAvailable\": 2", "\"minAvailable\": 2, \"network\": {\"required\": \"rack\"}"),
                        "pending[0].network.required: must be one of"),
                bad("bad gpu topology", s -> s.replace("\"minAvailable\": 2", "\"minAvailable\": 2, \"gpuTopology\": \"pcie\""),
                        "pending[0].gpuTopology: must be one of"),
                bad("unknown parent queue", s -> s.replace("\"capabilityGpus\": 8,", "\"capabilityGpus\": 8, \"parent\": \"org\","),
                        "queues[0].parent: unknown queue org"),
                bad("queue cycle", s -> s.replace("\"capabilityGpus\": 8,", "\"capabilityGpus\": 8, \"parent\": \"normal\",")
                        .replace("\"capabilityGpus\": 16,", "\"capabilityGpus\": 16, \"parent\": \"urgent\","), "queues[0].parent: queue hierarchy has a cycle"),
                bad("weight zero", s -> s.replace("\"weight\": 2", "\"weight\": 0"), "queues[0].weight: must be a number > 0"),
                bad("wrong type", s -> s.replaceFirst("\"schedulable\": true", "\"schedulable\": \"yes\""), "nodes[0].schedulable: must be true or false"),
                bad("nodes not array", s -> s.replace("\"nodes\": [", "\"nodes\": {\"x\": [").replace("],\n \"queues\"", "]},\n \"queues\""),
                        "nodes: must be an array"));
    }

    private static Arguments bad(String label, UnaryOperator<String> edit, String expected) {
        return Arguments.of(label, edit, expected);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("badInputs")
    void rejectsBadInputNamingTheField(String label, UnaryOperator<String> edit, String expected) {
        String json = edit.apply(SEED);
        assertThat(json).as("the edit must change the fixture").isNotEqualTo(SEED);
        assertThatThrownBy(() -> ScenarioCodec.read(json))
                .isInstanceOf(ScenarioValidationException.class)
                .satisfies(e -> assertThat(((ScenarioValidationException) e).violations())
                        .anySatisfy(v -> assertThat(v.toString()).startsWith(expected)))
                .satisfies(e -> assertThat(e.getMessage()).doesNotContain("\n"));
    }

    @Test
    void rejectsOverlappingRunningGpus() {
        String json = SEED.replace("\"running\": [", """
                "running": [{"name": "other", "queue": "normal", "tasks": [{"name": "w-0", "node": "dgx-01", "gpus": [0]}]},""");
        assertThatThrownBy(() -> ScenarioCodec.read(json))
                .isInstanceOf(ScenarioValidationException.class)
                .hasMessageContaining("running[1].tasks[0].gpus: GPU dgx-01/0 is already held by other/w-0");
    }

    @Test
    void rejectsRunningSharingBeyondOneGpu() {
        String json = SEED.replace("\"schedulable\": true\n  },\n  {", "\"schedulable\": true, \"gpuSharing\": true\n  },\n  {")
                .replace("\"running\": [", """
                "running": [{"name": "s1", "queue": "normal", "tasks": [{"name": "w-0", "node": "dgx-01", "gpus": [3], "gpuMilli": 600}]},
                            {"name": "s2", "queue": "normal", "tasks": [{"name": "w-0", "node": "dgx-01", "gpus": [3], "gpuMilli": 500}]},""");
        assertThatThrownBy(() -> ScenarioCodec.read(json)).hasMessageContaining("shared beyond 1000 milli");
    }
}
