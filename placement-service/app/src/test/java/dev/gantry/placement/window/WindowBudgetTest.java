package dev.gantry.placement.window;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class WindowBudgetTest {

    private static final long MS = 1_000_000;

    @Test
    void theFirstWindowGivesTheSolverWhatReadingLeft() {
        WindowBudget budget = new WindowBudget(Duration.ofMillis(200), 0.25);
        assertThat(budget.solveLimit(0, 30 * MS)).isEqualTo(Duration.ofMillis(170));
    }

    @Test
    void timeSpentAfterTheSolveIsKeptBackFromTheNextWindows() {
        WindowBudget budget = new WindowBudget(Duration.ofMillis(200), 0.25);
        budget.afterSolveTook(60 * MS);
        assertThat(budget.solveLimit(0, 30 * MS)).isEqualTo(Duration.ofMillis(110));
        budget.afterSolveTook(10 * MS); // 0.3 x 10 + 0.7 x 60 = 45
        assertThat(budget.afterSolveNanos()).isEqualTo(45 * MS);
        assertThat(budget.solveLimit(0, 30 * MS)).isEqualTo(Duration.ofMillis(125));
    }

    @Test
    void theSolverAlwaysGetsAQuarterOfTheLimitAndNeverMoreThanAll() {
        WindowBudget budget = new WindowBudget(Duration.ofSeconds(2), 0.25);
        budget.afterSolveTook(5_000 * MS);
        assertThat(budget.solveLimit(0, 100 * MS)).isEqualTo(Duration.ofMillis(500));
        WindowBudget fresh = new WindowBudget(Duration.ofSeconds(2), 0.25);
        assertThat(fresh.solveLimit(0, 0)).isEqualTo(Duration.ofSeconds(2));
    }

    @Test
    void aShareOfOneKeepsTheWholeLimitForTheSolver() {
        WindowBudget budget = new WindowBudget(Duration.ofMillis(200), 1);
        budget.afterSolveTook(80 * MS);
        assertThat(budget.solveLimit(0, 50 * MS)).isEqualTo(Duration.ofMillis(200));
    }

    @Test
    void aShareOutsideZeroToOneIsRefused() {
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> new WindowBudget(Duration.ofMillis(200), 1.5))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("min-share");
    }
}
