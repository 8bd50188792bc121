package dev.gantry.placement.engine.planner;

import static dev.gantry.placement.engine.planner.ReservationFixtures.node;
import static org.assertj.core.api.Assertions.assertThat;

import dev.gantry.placement.engine.domain.Migration;
import dev.gantry.placement.engine.domain.PendingJob;
import dev.gantry.placement.engine.domain.Placement;
import dev.gantry.placement.engine.domain.Plan;
import dev.gantry.placement.engine.domain.Queue;
import dev.gantry.placement.engine.domain.RunningJob;
import dev.gantry.placement.engine.domain.RunningTask;
import dev.gantry.placement.engine.domain.Scenario;
import dev.gantry.placement.engine.domain.TaskGroup;
import dev.gantry.placement.engine.domain.TaskPlacement;
import dev.gantry.placement.engine.validation.PlanValidator;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The service carries out a move only when it makes room for work the same plan places (a chain counts). */
class MovesThatMakeRoomTest {
    private static RunningJob small(String name, String node, Integer... gpus) {
        return new RunningJob(name, "team", 0, true, true, true, 0, List.of(new RunningTask("w-0", node, List.of(gpus), 1000, 1000, null)));
    }

    private static Migration move(String job, String node, Integer... gpus) {
        return new Migration(job, List.of(new TaskPlacement("w-0", node, List.of(gpus), null)));
    }

    private static Scenario scenario(List<RunningJob> running, List<PendingJob> pending) {
        return new Scenario(Scenario.FORMAT, "moves", 0, List.of(node("n1"), node("n2")), List.of(new Queue("team", 1, 0, null, true, null)),
                running, pending);
    }

    private static Plan plan(List<Placement> placements, List<Migration> migrations) {
        return new Plan(Plan.FORMAT, "moves", placements, List.of(), migrations, List.of(), 0, Map.of());
    }

    @Test
    void aMoveThatOnlyConsolidatesIsDroppedAndOneThatMakesRoomIsKept() {
        // a on n1 {0,1}, b on n1 {4,5}; c on n2 {2,3}: moving a to n2 {0,1} frees n1's 0-3 for the 4-GPU job; moving c helps nobody
        PendingJob four = new PendingJob("four", "team", 0, 0, List.of(new TaskGroup("w", 1, 4, 1000, 1000, null)), 1, null, null, null,
                false, null, null, true, true, null);
        Scenario sc = scenario(List.of(small("a", "n1", 0, 1), small("b", "n1", 4, 5), small("c", "n2", 2, 3)), List.of(four));
        Plan proposed = plan(List.of(new Placement("four", List.of(new TaskPlacement("w-0", "n1", List.of(0, 1, 2, 3), null)))),
                List.of(move("a", "n2", 0, 1), move("c", "n2", 4, 5)));
        assertThat(PlanValidator.validate(sc, proposed)).isEmpty();

        Plan kept = MovesThatMakeRoom.keep(sc, proposed);
        assertThat(kept.migrations()).extracting(Migration::job).containsExactly("a");
        assertThat(kept.placements()).extracting(Placement::job).containsExactly("four");
        assertThat(kept.metadata()).containsKey("movesDropped");
        assertThat(PlanValidator.validate(sc, kept)).isEmpty();
    }

    @Test
    void aChainOfMovesIsKeptWhole() {
        // a moves into c's GPUs, c moves away, and the 8-GPU job takes n1 that a left
        PendingJob eight = new PendingJob("eight", "team", 0, 0, List.of(new TaskGroup("w", 1, 8, 1000, 1000, null)), 1, null, null, null,
                false, null, null, true, true, null);
        Scenario sc = scenario(List.of(small("a", "n1", 0, 1), small("c", "n2", 0, 1)), List.of(eight));
        Plan proposed = plan(List.of(new Placement("eight", List.of(new TaskPlacement("w-0", "n1", List.of(0, 1, 2, 3, 4, 5, 6, 7), null)))),
                List.of(move("a", "n2", 2, 3), move("c", "n2", 4, 5)));
        // c's move makes room for nothing here (a takes 2,3): dropped; a's is kept
        Plan kept = MovesThatMakeRoom.keep(sc, proposed);
        assertThat(kept.migrations()).extracting(Migration::job).containsExactly("a");

        Plan chain = plan(proposed.placements(), List.of(move("a", "n2", 0, 1), move("c", "n2", 2, 3)));
        assertThat(PlanValidator.validate(sc, chain)).isEmpty();
        assertThat(MovesThatMakeRoom.keep(sc, chain).migrations()).as("a takes c's GPUs: c's move is part of the chain")
                .extracting(Migration::job).containsExactlyInAnyOrder("a", "c");
    }

    @Test
    void aPlanWhoseMovesMakeRoomForNothingMovesNobody() {
        Scenario sc = scenario(List.of(small("a", "n1", 0, 1), small("b", "n2", 0, 1)), List.of());
        Plan consolidation = plan(List.of(), List.of(move("a", "n2", 2, 3)));
        Plan kept = MovesThatMakeRoom.keep(sc, consolidation);
        assertThat(kept.migrations()).isEmpty();
        assertThat(PlanValidator.validate(sc, kept)).isEmpty();
    }
}
