package dev.gantry.placement.engine.validation;

import static org.assertj.core.api.Assertions.assertThat;

import dev.gantry.placement.engine.TestScenarios;
import dev.gantry.placement.engine.domain.Migration;
import dev.gantry.placement.engine.domain.Placement;
import dev.gantry.placement.engine.domain.Plan;
import dev.gantry.placement.engine.domain.Preemption;
import dev.gantry.placement.engine.domain.Scenario;
import dev.gantry.placement.engine.domain.TaskPlacement;
import dev.gantry.placement.engine.domain.Unplaced;
import dev.gantry.placement.engine.json.ScenarioCodec;
import dev.gantry.placement.engine.planner.Planners;
import dev.gantry.placement.engine.planner.SolverProfile;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** The Java validator and check_plan.py must agree: on every planner's plan and on broken ones. */
class PlanValidatorTest {

    static Stream<Arguments> plannedExamples() {
        return TestScenarios.EXAMPLES.stream().flatMap(s -> Stream.of("greedy", "fifo", "timefold").map(p -> Arguments.of(s, p)));
    }

    @ParameterizedTest(name = "{0} by {1}")
    @MethodSource("plannedExamples")
    void plannerPlansAreValidForBoth(String scenario, String planner) {
        String json = TestScenarios.json(scenario);
        Scenario sc = ScenarioCodec.read(json);
        Plan plan = Planners.byName(planner).plan(sc, SolverProfile.FAST);
        assertThat(PlanValidator.validate(sc, plan)).isEmpty();
        if (TestScenarios.checkerAvailable()) {
            var verdict = TestScenarios.check(json, plan);
            assertThat(verdict.valid()).as(verdict.output()).isTrue();
            PlanMetrics m = PlanMetrics.of(sc, plan);
            assertThat(verdict.output()).contains("\"netPriorityGpus\": " + num(m.netPriorityGpus()))
                    .contains("\"strandedGpus\": " + num(m.strandedGpus()))
                    .contains("\"freeWholeNodes\": " + m.freeWholeNodes());
        }
    }

    private static String num(double d) {
        return d == Math.rint(d) && !Double.toString(d).contains("E") ? Double.toString(d) : Double.toString(d);
    }

    private static TaskPlacement t(String task, String node, Integer... gpus) {
        return new TaskPlacement(task, node, List.of(gpus), null);
    }

    private static Plan plan(List<Placement> placements, List<Preemption> preemptions, List<Migration> migrations, List<Unplaced> unplaced) {
        return new Plan(Plan.FORMAT, "x", placements, preemptions, migrations, unplaced, 0, Map.of());
    }

    private static final Placement TF_OK = new Placement("tf-dist-train", List.of(t("ps-0", "dgx-02", 0), t("worker-0", "dgx-02", 1, 2)));

    static Stream<Arguments> brokenPlans() {
        String seed = TestScenarios.json("seed-volcano-example");
        String frag = TestScenarios.json("frag-migrate-small");
        String flex = TestScenarios.json("type-flex");
        return Stream.of(
                Arguments.of("gpu used twice", seed, plan(List.of(new Placement("tf-dist-train",
                        List.of(t("ps-0", "dgx-01", 0), t("worker-0", "dgx-01", 1, 2)))), List.of(), List.of(), List.of()), "already used"),
                Arguments.of("wrong gpu count", seed, plan(List.of(new Placement("tf-dist-train",
                        List.of(t("ps-0", "dgx-02", 0), t("worker-0", "dgx-02", 1)))), List.of(), List.of(), List.of()), "needs 2 distinct GPUs"),
                Arguments.of("gang too small", seed, plan(List.of(new Placement("tf-dist-train",
                        List.of(t("worker-0", "dgx-02", 1, 2)))), List.of(), List.of(), List.of()), "gang places 1 pods"),
                Arguments.of("job missing", seed, plan(List.of(), List.of(), List.of(), List.of()), "appears 0 times"),
                Arguments.of("job twice", seed, plan(List.of(TF_OK), List.of(), List.of(), List.of(new Unplaced("tf-dist-train", "x"))), "appears 2 times"),
                Arguments.of("bad task name", seed, plan(List.of(new Placement("tf-dist-train",
                        List.of(t("ps-1", "dgx-02", 0), t("worker-0", "dgx-02", 1, 2)))), List.of(), List.of(), List.of()), "is not <taskGroup>-<index>"),
                Arguments.of("unknown node", seed, plan(List.of(new Placement("tf-dist-train",
                        List.of(t("ps-0", "dgx-09", 0), t("worker-0", "dgx-02", 1, 2)))), List.of(), List.of(), List.of()), "unknown node"),
                Arguments.of("unjustified preemption", seed, plan(List.of(), List.of(new Preemption("notebook-7", "x")), List.of(),
                        List.of(new Unplaced("tf-dist-train", "x"))), "not justified"),
                Arguments.of("migrate non-migratable", seed, plan(List.of(TF_OK), List.of(), List.of(new Migration("notebook-7",
                        List.of(t("main-0", "dgx-02", 5)))), List.of()), "migrates non-migratable"),
                Arguments.of("preempt non-preemptible", frag, plan(List.of(), List.of(new Preemption("small-0", "x")), List.of(),
                        List.of(new Unplaced("whole-node", "x"))), "preempts non-preemptible"),
                Arguments.of("migration changes gpu count", frag, plan(List.of(), List.of(), List.of(new Migration("small-0",
                        List.of(t("w-0", "n01", 2)))), List.of(new Unplaced("whole-node", "x"))), "changes its GPU count"),
                Arguments.of("capability", seed.replace("\"capabilityGpus\": 16", "\"capabilityGpus\": 2"), plan(List.of(TF_OK), List.of(), List.of(), List.of()),
                        "capability 2"),
                Arguments.of("cpu over", seed.replaceFirst("(\"name\": \"dgx-02\"[\\s\\S]*?)\"cpuMillis\": 224000", "$1\"cpuMillis\": 1000"),
                        plan(List.of(TF_OK), List.of(), List.of(), List.of()), "CPU 12000m over"),
                Arguments.of("network leaf", seed.replaceFirst("\"leaf\": \"lf1\"", "\"leaf\": \"lf0\"")
                        .replace("\"minAvailable\": 2", "\"minAvailable\": 2, \"network\": {\"required\": \"leaf\"}"),
                        plan(List.of(new Placement("tf-dist-train", List.of(t("ps-0", "dgx-01", 1), t("worker-0", "dgx-02", 1, 2)))),
                                List.of(), List.of(), List.of()), "network.required=leaf"),
                Arguments.of("wrong model", flex, plan(List.of(new Placement("flexible-0", List.of(t("worker-0", "a100-00", 0, 1, 2, 3, 4, 5, 6, 7))),
                        new Placement("a100-only-0", List.of(t("worker-0", "v100-00", 0, 1, 2, 3, 4, 5, 6, 7)))), List.of(), List.of(), List.of()), "job wants"),
                Arguments.of("nvlink island", flex.replace("\"priority\": 900,", "\"priority\": 900, \"gpuTopology\": \"nvlink\","),
                        plan(List.of(new Placement("flexible-0", List.of(t("worker-0", "v100-00", 0, 1, 2, 3, 4, 5, 6, 7)))),
                                List.of(), List.of(), List.of(new Unplaced("a100-only-0", "x"))), "not in one nvlink group"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("brokenPlans")
    void brokenPlansAreInvalidForBoth(String label, String scenarioJson, Plan plan, String expected) {
        Scenario sc = ScenarioCodec.read(scenarioJson);
        assertThat(PlanValidator.validate(sc, plan)).anySatisfy(v -> assertThat(v).contains(expected));
        if (TestScenarios.checkerAvailable()) {
            var verdict = TestScenarios.check(scenarioJson, plan);
            assertThat(verdict.valid()).as(verdict.output()).isFalse();
            assertThat(verdict.output()).contains(expected);
        }
    }
}
