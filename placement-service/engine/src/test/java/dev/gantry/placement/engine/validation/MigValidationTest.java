package dev.gantry.placement.engine.validation;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.gantry.placement.engine.domain.Placement;
import dev.gantry.placement.engine.domain.Plan;
import dev.gantry.placement.engine.domain.Scenario;
import dev.gantry.placement.engine.domain.TaskPlacement;
import dev.gantry.placement.engine.json.ScenarioCodec;
import dev.gantry.placement.engine.json.ScenarioValidationException;
import dev.gantry.placement.engine.json.Violation;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** MIG in the scenario and the plan: what a window may say about MIG devices, and what a plan may do with them. */
class MigValidationTest {

    private static String scenario(String migDevices, String running, String group) {
        return """
                {"format": "gantry-scenario/v1", "name": "mig",
                 "nodes": [{"name": "n", "gpuModel": "A100", "gpus": 2, "gpuSharing": true, "migDevices": [%s]}],
                 "queues": [{"name": "q"}], "running": [%s],
                 "pending": [{"name": "p", "queue": "q", "taskGroups": [%s]}]}""".formatted(migDevices, running, group);
    }

    private static final String DEVICES = """
            {"id": "MIG-a", "gpu": 1, "profile": "1g.10gb"}, {"id": "MIG-b", "gpu": 1, "profile": "3g.40gb"}""";
    private static final String MIG_GROUP = "{\"name\": \"m\", \"replicas\": 1, \"gpusPerReplica\": 1, \"migProfile\": \"1g.10gb\"}";

    private static List<String> violations(String json) {
        try {
            ScenarioCodec.read(json);
            return List.of();
        } catch (ScenarioValidationException e) {
            return e.violations().stream().map(Violation::toString).toList();
        }
    }

    @Test
    void aTaskGroupsMigRequestIsCheckedFieldByField() {
        assertThat(violations(scenario(DEVICES, "", MIG_GROUP))).isEmpty();
        assertThat(violations(scenario(DEVICES, "", "{\"name\": \"m\", \"gpusPerReplica\": 1, \"migProfile\": \"1g\"}")))
                .singleElement().asString().startsWith("pending[0].taskGroups[0].migProfile: must be a MIG profile such as 1g.10gb");
        assertThat(violations(scenario(DEVICES, "", "{\"name\": \"m\", \"gpusPerReplica\": 1, \"gpuMilli\": 500, \"migProfile\": \"1g.10gb\"}")))
                .singleElement().asString().contains("taskGroups[0].migProfile").contains("not both");
        assertThat(violations(scenario(DEVICES, "", "{\"name\": \"m\", \"gpusPerReplica\": 0, \"migProfile\": \"1g.10gb\"}")))
                .singleElement().asString().startsWith("pending[0].taskGroups[0].gpusPerReplica: must be 1..64");
        String nvlink = scenario(DEVICES, "", MIG_GROUP).replace("\"taskGroups\"", "\"gpuTopology\": \"nvlink\", \"taskGroups\"");
        assertThat(violations(nvlink)).singleElement().asString().contains("gpuTopology must be any");
    }

    @Test
    void aNodesMigDevicesLieOnItsGpusUnderIdsOfTheirOwn() {
        assertThat(violations(scenario("{\"id\": \"MIG-a\", \"gpu\": 2, \"profile\": \"1g.10gb\"}", "", MIG_GROUP)))
                .singleElement().asString().startsWith("nodes[0].migDevices[0].gpu: GPU index 2 is not on the node");
        assertThat(violations(scenario("{\"id\": \"MIG-a\", \"gpu\": 1, \"profile\": \"1g.10gb\"}, {\"id\": \"MIG-a\", \"gpu\": 1, \"profile\": \"1g.10gb\"}",
                "", MIG_GROUP))).singleElement().asString().startsWith("nodes[0].migDevices[1].id: duplicate MIG device MIG-a");
        assertThat(violations(scenario("{\"id\": \"MIG-a\", \"gpu\": 1, \"profile\": \"tiny\"}", "", MIG_GROUP)))
                .singleElement().asString().startsWith("nodes[0].migDevices[0].profile");
    }

    @Test
    void runningTasksHoldMigDevicesOfTheirProfileOnceAndNeverTheGpuInMigMode() {
        String onDevice = "{\"name\": \"r\", \"queue\": \"q\", \"tasks\": [{\"name\": \"t-0\", \"node\": \"n\", \"gpus\": [], "
                + "\"migProfile\": \"1g.10gb\", \"migDevices\": [\"MIG-a\"]}]}";
        assertThat(violations(scenario(DEVICES, onDevice, MIG_GROUP))).isEmpty();
        assertThat(violations(scenario(DEVICES, onDevice + "," + onDevice.replace("\"r\"", "\"r2\""), MIG_GROUP)))
                .singleElement().asString().contains("MIG device n/MIG-a is already held by r/t-0");
        assertThat(violations(scenario(DEVICES, onDevice.replace("MIG-a", "MIG-b"), MIG_GROUP)))
                .singleElement().asString().contains("MIG device MIG-b on n is 3g.40gb, not 1g.10gb");
        String wholeOnMigGpu = "{\"name\": \"r\", \"queue\": \"q\", \"tasks\": [{\"name\": \"t-0\", \"node\": \"n\", \"gpus\": [1]}]}";
        assertThat(violations(scenario(DEVICES, wholeOnMigGpu, MIG_GROUP)))
                .singleElement().asString().contains("GPU n/1 is in MIG mode");
    }

    @Test
    void aPlanGivesMigDevicesOfTheProfileOnceAndNoGpuInMigMode() {
        Scenario sc = ScenarioCodec.read(scenario(DEVICES, "", MIG_GROUP + ", {\"name\": \"w\", \"replicas\": 1, \"gpusPerReplica\": 1}"));
        Plan ok = plan(new TaskPlacement("m-0", "n", List.of(), null, List.of("MIG-a")), new TaskPlacement("w-0", "n", List.of(0), null));
        assertThat(PlanValidator.validate(sc, ok)).isEmpty();
        assertThat(PlanValidator.validate(sc, plan(new TaskPlacement("m-0", "n", List.of(), null, List.of("MIG-b")),
                new TaskPlacement("w-0", "n", List.of(0), null)))).singleElement().asString().contains("MIG-b on n is 3g.40gb, not 1g.10gb");
        assertThat(PlanValidator.validate(sc, plan(new TaskPlacement("m-0", "n", List.of(), null, List.of("MIG-a")),
                new TaskPlacement("w-0", "n", List.of(1), null)))).singleElement().asString().contains("GPU n/1 is in MIG mode");
        assertThat(PlanValidator.validate(sc, plan(new TaskPlacement("m-0", "n", List.of(0), null),
                new TaskPlacement("w-0", "n", List.of(0), null)))).anySatisfy(v -> assertThat(v).contains("needs 1 MIG devices 1g.10gb and no GPU"));
        assertThat(PlanValidator.validate(sc, plan(new TaskPlacement("m-0", "n", List.of(), null, List.of("MIG-x")),
                new TaskPlacement("w-0", "n", List.of(0), null)))).singleElement().asString().contains("MIG device MIG-x is not on node n");

        String taken = "{\"name\": \"r\", \"queue\": \"q\", \"tasks\": [{\"name\": \"t-0\", \"node\": \"n\", \"gpus\": [], "
                + "\"migProfile\": \"1g.10gb\", \"migDevices\": [\"MIG-a\"]}]}";
        Scenario held = ScenarioCodec.read(scenario(DEVICES, taken, MIG_GROUP + ", {\"name\": \"w\", \"replicas\": 1, \"gpusPerReplica\": 1}"));
        assertThat(PlanValidator.validate(held, ok)).singleElement().asString().contains("MIG device n/MIG-a already used by r/t-0");
    }

    @Test
    void anUnknownMigFieldTypeIsRefusedWithItsPath() {
        assertThatThrownBy(() -> ScenarioCodec.read(scenario("{\"id\": \"MIG-a\", \"gpu\": \"one\", \"profile\": \"1g.10gb\"}", "", MIG_GROUP)))
                .isInstanceOf(ScenarioValidationException.class).hasMessageContaining("nodes[0].migDevices[0].gpu");
    }

    private static Plan plan(TaskPlacement m, TaskPlacement w) {
        return new Plan(Plan.FORMAT, "mig", List.of(new Placement("p", List.of(m, w))), List.of(), List.of(), List.of(), 0, Map.of());
    }
}
