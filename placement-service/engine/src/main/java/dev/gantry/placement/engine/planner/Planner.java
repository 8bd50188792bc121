package dev.gantry.placement.engine.planner;

import dev.gantry.placement.engine.domain.Plan;
import dev.gantry.placement.engine.domain.Scenario;

/**
 * Decides one scheduling window: an immutable scenario in, a plan out. Implementations are
 * stateless and thread-safe; get one with {@link Planners#byName(String)}.
 */
public interface Planner {

    /** {@code timefold}, {@code greedy} or {@code fifo}. */
    String name();

    /** Plans the window; the profile's time limit bounds the call (greedy and fifo ignore it). */
    Plan plan(Scenario scenario, SolverProfile profile);

    /**
     * Whether its plans may move running work ({@code timefold}): a composition around it then also
     * looks for moves without it ({@link RoomByMoves}) when its plan has none; greedy and fifo never move.
     */
    default boolean movesWork() {
        return false;
    }

    default Plan plan(Scenario scenario) {
        return plan(scenario, SolverProfile.BALANCED);
    }
}
