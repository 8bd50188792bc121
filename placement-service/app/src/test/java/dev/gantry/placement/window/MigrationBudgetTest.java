package dev.gantry.placement.window;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.gantry.contracts.jobs.JobQueued;
import dev.gantry.contracts.nodes.NodeInfo;
import dev.gantry.placement.engine.domain.RunningJob;
import dev.gantry.placement.engine.domain.Scenario;
import dev.gantry.placement.engine.validation.ScenarioValidator;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * Plain unit test (no Quarkus): which running jobs the window offers the solver to move (the
 * disruption budget), and how a moving job holds both its old GPUs and the ones it goes to.
 */
class MigrationBudgetTest {

    private static final Instant NOW = Instant.parse("2026-12-07T12:00:00Z");
    private static final NodeInfo N1 = node("n1");
    private static final NodeInfo N2 = node("n2");

    private static NodeInfo node(String name) {
        return new NodeInfo(name, "A100", 8, List.of(), List.of(), false, 0, 0, null, null, Map.of(), List.of(), true,
                NodeInfo.Health.UNKNOWN, 0, null, 0, false, null);
    }

    private static JobQueued spec(UUID id, String queue, boolean migratable) {
        return new JobQueued(id, "j", queue, "u", 0, Instant.EPOCH, null, List.of(new JobQueued.TaskGroup("w", 1, 2, null, 0, 0)),
                null, null, null, false, Map.of("pool", "a"), List.of(new JobQueued.Toleration("gpu", null)), true, migratable, null, null,
                migratable);
    }

    private static DisruptionBudget budget(int perHour, int perQueue, String queueLimits) {
        return new DisruptionBudget(null, true, perHour, perQueue, Optional.of(queueLimits), Duration.ofHours(1), Duration.ofMinutes(10));
    }

    private static ScenarioBuilder.Placed placed(UUID id, String queue, boolean migratable, Instant boundAt, Instant lastMoved) {
        return new ScenarioBuilder.Placed(id, queue, spec(id, queue, migratable), boundAt, null, lastMoved, List.of(), false);
    }

    @Test
    void theBudgetOffersOnlyJobsThatAskToMoveAreNotProtectedAndFitTheHourlyLimits() {
        DisruptionBudget budget = budget(6, 3, "strict=0");
        Instant old = NOW.minus(Duration.ofHours(2));
        ScenarioBuilder.Placed ok = placed(UUID.randomUUID(), "q", true, old, null);
        ScenarioBuilder.Placed notAsked = placed(UUID.randomUUID(), "q", false, old, null);
        ScenarioBuilder.Placed justPlaced = placed(UUID.randomUUID(), "q", true, NOW.minus(Duration.ofMinutes(5)), null);
        ScenarioBuilder.Placed movedRecently = placed(UUID.randomUUID(), "q", true, old, NOW.minus(Duration.ofMinutes(30)));
        ScenarioBuilder.Placed strictQueue = placed(UUID.randomUUID(), "strict", true, old, null);
        List<ScenarioBuilder.Placed> offered = budget.offer(NOW, List.of(ok, notAsked, justPlaced, movedRecently, strictQueue),
                DisruptionBudget.Spent.NONE);
        assertThat(offered).extracting(ScenarioBuilder.Placed::movable).containsExactly(true, false, false, false, false);

        assertThat(budget.refusal(NOW, "q", old, null, new DisruptionBudget.Spent(6, Map.of())))
                .isEqualTo("the cluster's 6 moves per hour are spent");
        assertThat(budget.refusal(NOW, "q", old, null, new DisruptionBudget.Spent(3, Map.of("q", 3L))))
                .isEqualTo("queue q's 3 moves per hour are spent");
        assertThat(budget.refusal(NOW, "q", NOW.minus(Duration.ofMinutes(5)), null, DisruptionBudget.Spent.NONE))
                .startsWith("protected after its placement until");
        assertThat(budget.refusal(NOW, "q", old, null, new DisruptionBudget.Spent(2, Map.of("q", 2L)))).isNull();
        assertThatThrownBy(() -> budget(6, 3, "q=-1")).hasMessageContaining("queue-limits");
    }

    @Test
    void aMovableJobIsOfferedWithWhereItMayGoAndAMovingOneHoldsBothPlacesPinned() {
        UUID movable = UUID.randomUUID();
        UUID moving = UUID.randomUUID();
        Instant old = NOW.minus(Duration.ofHours(2));
        ScenarioBuilder.Held movingTarget = new ScenarioBuilder.Held(moving, "w-0", "n2", List.of(0, 1), null, 0, 0);
        List<ScenarioBuilder.Placed> placed = List.of(
                placed(movable, "q", true, old, null).withMovable(true),
                new ScenarioBuilder.Placed(moving, "q", spec(moving, "q", true), old, null, null, List.of(movingTarget), true));
        List<ScenarioBuilder.Held> held = List.of(
                new ScenarioBuilder.Held(movable, "w-0", "n1", List.of(0, 1), null, 0, 0),
                new ScenarioBuilder.Held(moving, "w-0", "n1", List.of(2, 3), null, 0, 0));
        Scenario sc = ScenarioBuilder.build(NOW, List.of(N1, N2), placed, held, List.of());

        assertThat(ScenarioValidator.validate(sc)).isEmpty();
        RunningJob a = sc.running().stream().filter(r -> r.name().equals(movable.toString())).findFirst().orElseThrow();
        assertThat(a.migratable()).isTrue();
        assertThat(a.nodeSelector()).containsEntry("pool", "a");
        assertThat(a.tolerations()).extracting(t -> t.key()).containsExactly("gpu");
        RunningJob b = sc.running().stream().filter(r -> r.name().equals(moving.toString())).findFirst().orElseThrow();
        assertThat(b.pinned()).as("a job being moved is neither moved again nor preempted").isTrue();
        assertThat(b.tasks()).extracting(t -> t.node() + t.gpus()).containsExactlyInAnyOrder("n1[2, 3]", "n2[0, 1]");
    }
}
