package dev.gantry.placement.engine.planner;

import static org.assertj.core.api.Assertions.assertThat;

import dev.gantry.placement.engine.domain.Node;
import dev.gantry.placement.engine.domain.PendingJob;
import dev.gantry.placement.engine.domain.Plan;
import dev.gantry.placement.engine.domain.Queue;
import dev.gantry.placement.engine.domain.RunningJob;
import dev.gantry.placement.engine.domain.RunningTask;
import dev.gantry.placement.engine.domain.Scenario;
import dev.gantry.placement.engine.domain.TaskGroup;
import dev.gantry.placement.engine.validation.PlanValidator;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The solver bound by a move count with a fixed seed gives the same plan whatever its deadline
 * and however often it runs: replays that use it repeat to the decimal.
 *
 * <p>Four 8-GPU nodes with 1-5 GPUs held on each, and more waiting gangs (2-8 GPUs) than fit,
 * so greedy leaves jobs waiting and the solver runs instead of the fast path.
 */
class ReproducibleSolveTest {
    private static final long MOVES = 3_000;

    private static Node node(String name) {
        return new Node(name, "V100", 8, null, null, 64_000, 512_000, null, null, null, null, true, false);
    }

    private static Scenario crowded() {
        List<Node> nodes = List.of(node("n0"), node("n1"), node("n2"), node("n3"));
        List<RunningJob> running = new ArrayList<>();
        int[] held = {3, 5, 1, 4};
        for (int i = 0; i < nodes.size(); i++) {
            List<Integer> gpus = new ArrayList<>();
            for (int g = 0; g < held[i]; g++) {
                gpus.add(g);
            }
            running.add(new RunningJob("run-" + i, "team", 0, false, false, false, 0,
                    List.of(new RunningTask("w-0", nodes.get(i).name(), gpus, 1000, 1000, null))));
        }
        List<PendingJob> pending = new ArrayList<>();
        int[] sizes = {4, 3, 2, 6, 2, 5, 8, 3, 2, 4};
        for (int i = 0; i < sizes.length; i++) {
            pending.add(new PendingJob("job-" + i, "team", 0, 10L * i, List.of(new TaskGroup("w", 1, sizes[i], 1000, 1000, null)), 1,
                    null, null, null, false, null, null, false, false, 600L));
        }
        return new Scenario(Scenario.FORMAT, "crowded", 1000, nodes, List.of(new Queue("team", 1, 0, null, true, null)), running, pending);
    }

    @Test
    void theSamePlanUnderAnyDeadline() {
        Scenario sc = crowded();
        Planner planner = new TimefoldPlanner(null, MOVES);
        Plan tight = planner.plan(sc, SolverProfile.FAST.withTimeLimit(Duration.ofMillis(1)));
        Plan loose = planner.plan(sc, SolverProfile.FAST.withTimeLimit(Duration.ofSeconds(5)));
        Plan again = new TimefoldPlanner(null, MOVES).plan(sc, SolverProfile.FAST);

        assertThat(PlanValidator.validate(sc, tight)).isEmpty();
        assertThat(tight.metadata()).doesNotContainKey("fallback").containsKey("score");
        assertThat(tight.placements()).isNotEmpty().isEqualTo(loose.placements()).isEqualTo(again.placements());
        assertThat(tight.unplaced()).isNotEmpty().isEqualTo(loose.unplaced()).isEqualTo(again.unplaced());
        assertThat(tight.metadata().get("score")).isEqualTo(loose.metadata().get("score")).isEqualTo(again.metadata().get("score"));
    }

    @Test
    void theDeadlineBoundSolverGivesUpUnderADeadlineTheReproducibleOneIgnores() {
        Scenario sc = crowded();
        Planner warm = new TimefoldPlanner();
        warm.plan(sc, SolverProfile.FAST); // the first solve of a JVM gets a start-up allowance
        Plan tight = warm.plan(sc, SolverProfile.FAST.withTimeLimit(Duration.ofMillis(1)));
        assertThat(tight.metadata().get("fallback")).startsWith("no time left");
    }
}
