package dev.gantry.placement.window;

import static org.assertj.core.api.Assertions.assertThat;

import dev.gantry.contracts.jobs.JobQueued;
import dev.gantry.contracts.nodes.NodeInfo;
import dev.gantry.placement.engine.domain.Placement;
import dev.gantry.placement.engine.domain.Preemption;
import dev.gantry.placement.engine.planner.Planners;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import jakarta.inject.Inject;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * Reclaim toward the fair share (issue 20) in the service's window: with
 * {@code gantry.placement.reclaim.toward-fair-share=true} the window's solver profile carries it, and
 * the window's own composition (reservations around the planner) plans team-b's reclaim. The
 * window's state is given here, not read: two 8-GPU nodes held by team-a's two preemptible
 * priority-500 jobs, team-b waiting with an 8-GPU priority-100 job, no quota shares (equal weights,
 * no guarantees).
 */
@QuarkusTest
@TestProfile(ReclaimTowardFairShareWindowTest.On.class)
class ReclaimTowardFairShareWindowTest {

    public static class On implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of("gantry.placement.reclaim.toward-fair-share", "true");
        }
    }

    private static final String MODEL = "H100-FAIR-TEST";

    @Inject
    WindowLoop loop;

    private static NodeInfo node(String name) {
        return new NodeInfo(name, MODEL, 8, List.of(List.of(0, 1, 2, 3, 4, 5, 6, 7)), List.of(), false, 128_000, 1_024_000,
                new NodeInfo.Topology("z1", "s1", "leaf-fair"), null, Map.of(), List.of(), true, NodeInfo.Health.READY, 81_920, null, 0,
                false, Instant.now());
    }

    private static JobQueued job(UUID id, String queue, int priority, Instant submitted) {
        return new JobQueued(id, "fair-" + id.toString().substring(0, 8), queue, "fay", priority, submitted, null,
                List.of(new JobQueued.TaskGroup("worker", 1, 8, null, 1000, 4000)), List.of(MODEL), null, null, false, Map.of(), List.of(),
                true, false, 3600L);
    }

    private static ScenarioBuilder.Held held(UUID job, String node) {
        return new ScenarioBuilder.Held(job, "worker-0", node, List.of(0, 1, 2, 3, 4, 5, 6, 7), null, 1000, 4000, null, List.of());
    }

    @Test
    void theWindowsProfileReclaimsTowardTheFairShareWhenConfigured() {
        Instant now = Instant.now();
        UUID older = UUID.randomUUID();
        UUID newer = UUID.randomUUID();
        UUID b = UUID.randomUUID();
        WindowLoop.State state = new WindowLoop.State(List.of(node("fair-1"), node("fair-2")),
                List.of(new ScenarioBuilder.Placed(older, "team-a", job(older, "team-a", 500, now.minusSeconds(8000)), now.minusSeconds(7200)),
                        new ScenarioBuilder.Placed(newer, "team-a", job(newer, "team-a", 500, now.minusSeconds(8000)), now.minusSeconds(600))),
                List.of(held(older, "fair-1"), held(newer, "fair-2")),
                List.of(new ScenarioBuilder.Waiting(b, job(b, "team-b", 100, now.minusSeconds(60)))), List.of());

        assertThat(loop.profile().reclaimTowardFairShare()).as("gantry.placement.reclaim.toward-fair-share").isTrue();
        WindowLoop.Decision on = loop.decide(now, state, state.waiting(), Planners.byName("timefold"), loop.profile(), "");
        assertThat(on.plan()).isNotNull();
        assertThat(on.plan().preemptions()).extracting(Preemption::job).containsExactly(newer.toString());
        assertThat(on.plan().placements()).extracting(Placement::job).containsExactly(b.toString());

        WindowLoop.Decision off = loop.decide(now, state, state.waiting(), Planners.byName("timefold"),
                loop.profile().withReclaimTowardFairShare(false), "");
        assertThat(off.plan()).isNotNull();
        assertThat(off.plan().preemptions()).as("without the option: no guarantee to restore, a lower priority").isEmpty();
        assertThat(off.plan().placements()).isEmpty();
    }
}
